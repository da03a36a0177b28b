"""The score in plain words: what each matcher is, and a few sentences that read
a result (how many objects were found, how many detections were false, what the
matchers disagree about and why).

Plain strings, so the terminal tables and the HTML report say the same thing.
The matchers are those of Özdemir et al. (2010): bipartite graph matching
(bgm, §4.1.1), Hoover et al.'s (1996) tolerance rule (hoover, §4.1.2) and
multi-object maximum overlap matching (mom, §4.1.3: one-to-one, one-to-many and
many-to-one instances); iou is the one-to-one
IoU-threshold rule of the detection benchmarks (Everingham et al. 2010).
"""

from __future__ import annotations

from typing import Any

from geoeval.matching import registry


def _threshold(result: Any, matcher: str) -> float:
    """A matcher's threshold (its first registered parameter) as the run used it."""
    p = registry.get(matcher).parameters[0]
    return float((getattr(result, "parameters", {}) or {}).get(p.keyword, p.default))


def _known(name: str) -> Any:
    """The registry entry of ``name``, or ``None`` for a name it does not hold."""
    return registry.get(name) if name in registry.names() else None


def header(name: str, result: Any) -> str:
    """A matcher's column header: its name, and under it what it allows."""
    spec = _known(name)
    if spec is None:
        return name
    return f"{name}\n{spec.words(spec.header, getattr(result, 'parameters', None))}"


def and_list(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _verb(names: list[str], singular: str, plural: str) -> str:
    return singular if len(names) == 1 else plural


def plural(count: int, one: str, many: str) -> str:
    """``one`` for a count of 1, else ``many`` (words agree with their number).

    >>> f"1 {plural(1, 'detection covers', 'detections each cover')}"
    '1 detection covers'
    """
    return one if count == 1 else many


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "–"


def _span(values: dict[str, int], whole: int, noun: str) -> str:
    """``2,879 of 3,000 (96 %)`` when every matcher agrees, else the extremes."""
    lo = min(values, key=lambda n: values[n])
    hi = max(values, key=lambda n: values[n])
    if values[lo] == values[hi]:
        return f"{values[hi]:,} of {whole:,} {noun} ({_pct(values[hi], whole)})"
    return (f"{values[lo]:,} ({_pct(values[lo], whole)}, {lo}) to {values[hi]:,} "
            f"({_pct(values[hi], whole)}, {hi}) of {whole:,} {noun}")


def explain(result: Any) -> list[str]:
    """A few plain sentences reading a result's summary
    (:class:`~geoeval.scoring.summary.ScoreSummary`).

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> def m(found, false, split=0, merge=0):
    ...     kinds = {"one-to-one": found - split - merge, "one-to-many": split,
    ...              "many-to-one": merge}
    ...     return NS(matched_reference=found, false_alarms=false, instances_by_kind=kinds)
    >>> res = NS(reference=NS(objects=10), submission=NS(objects=12), parameters={},
    ...          results={"bgm": m(8, 4), "mom": m(8, 1, split=2)})
    >>> print("\\n".join(explain(res)))  # doctest: +NORMALIZE_WHITESPACE
    Found 8 of 10 reference objects (80%); false: 1 (8%, mom) to 4 (33%, bgm) of 12 detections.
    2 reference objects were detected in several pieces: mom credits the pieces; bgm keeps one
    piece each and counts the others as false alarms.
    """
    nr, ns = result.reference.objects, result.submission.objects
    ms = result.results
    lines: list[str] = []
    if nr == 0 and ns == 0:
        lines.append("Neither side has objects: there is nothing to find and nothing was "
                     "detected, so precision, recall and F1 are undefined.")
    elif nr == 0:
        lines.append("The reference has no objects: there is nothing to find, so every "
                     "detection is a false alarm (precision and F1 are 0, recall undefined).")
    elif ns == 0:
        lines.append("The submission has no objects: nothing was detected, so every reference "
                     "object is missed (recall and F1 are 0, precision undefined).")
    if nr == 0 or ns == 0 or not ms:
        return lines
    found = {n: r.matched_reference for n, r in ms.items()}
    false = {n: r.false_alarms for n, r in ms.items()}
    lines.append(f"Found {_span(found, nr, 'reference objects')}; false: "
                 f"{_span(false, ns, 'detections')}.")
    kinds = {n: r.instances_by_kind for n, r in ms.items()}
    one_to_one = [n for n in ms if _known(n) is not None and _known(n).one_to_one]
    many = [n for n in ms if _known(n) is not None and not _known(n).one_to_one]
    split = max((kinds[n].get("one-to-many", 0) for n in many), default=0)
    merge = max((kinds[n].get("many-to-one", 0) for n in many), default=0)
    # (count, what happened, what the many-to-one matchers credit, what the one-to-one
    # ones keep (verb forms, object), and what they count the rest as)
    cases = (
        (split, plural(split, "reference object was detected in several pieces",
                       "reference objects were detected in several pieces"), "the pieces",
         ("keeps", "keep"), plural(split, "one piece", "one piece each"), "false alarms"),
        (merge, plural(merge, "detection covers several reference objects",
                       "detections each cover several reference objects"), "them",
         ("matches", "match"), "one of them", "missed"),
    )
    for count, what, credited, keep, kept, rest_as in cases:
        if not count:
            continue
        rest = (f"; {and_list(one_to_one)} {_verb(one_to_one, *keep)} {kept} "
                f"and {_verb(one_to_one, 'counts', 'count')} the others as {rest_as}"
                if one_to_one else "")
        lines.append(f"{count:,} {what}: "
                     f"{and_list(many)} {_verb(many, 'credits', 'credit')} {credited}{rest}.")
    if "iou" in ms and "bgm" in ms and found["iou"] < found["bgm"]:
        fewer = found["bgm"] - found["iou"]
        lines.append(f"iou needs IoU ≥ {_threshold(result, 'iou'):g}: it finds {fewer:,} fewer "
                     f"{plural(fewer, 'reference object', 'reference objects')} than bgm, "
                     "which takes any overlap.")
    if "hoover" in ms and "mom" in ms and found["hoover"] < found["mom"]:
        fewer = found["mom"] - found["hoover"]
        t = _threshold(result, "hoover")
        lines.append(f"hoover needs the pieces to cover at least T = {t:g} of each "
                     f"other: it finds {fewer:,} fewer "
                     f"{plural(fewer, 'reference object', 'reference objects')} than mom, "
                     "which has no threshold.")
    return lines


def matcher_lines(result: Any) -> list[str]:
    """One sentence per matcher that ran: what it allows and what its accuracy is
    (:attr:`~geoeval.matching.registry.Matcher.allows`,
    :attr:`~geoeval.matching.registry.Matcher.accuracy_words`)."""
    values = getattr(result, "parameters", None)
    out = []
    for name in result.results:
        spec = _known(name)
        if spec is None:
            continue
        out.append(f"{name}: {spec.words(spec.allows, values)}; "
                   f"accuracy = {spec.accuracy_words}.")
    return out


def _values(result: Any, name: str) -> tuple:
    return tuple(result.values[name].get(c) for c in result.indicators)


def _best_on(result: Any, group: list[str]) -> list[str]:
    """``best on precision: s2 (0.9783)`` for each indicator that tells the group
    apart: its best members on it."""
    out = []
    for col in result.indicators:
        vals = {n: result.values[n].get(col) for n in group
                if result.values[n].get(col) is not None}
        if not vals:
            continue
        pick = min if col in result.lower_is_better else max
        top = pick(vals.values())
        best = [n for n in group if vals.get(n) == top]
        if len(best) == len(vals):
            continue  # equal on it: it decides nothing
        out.append(f"best on {col}: {and_list(best)} ({top:.4f})")
    return out


def ranking_lines(result: Any) -> list[str]:
    """A ranking in plain words (Özdemir et al. 2010, §4.3; Patil & Taillie 2004):
    the dominance rule, what the CRF operator did, and for every group the order
    left level, whether its members are incomparable or tied and the rule (and
    numbers) that ordered them."""
    names = list(result.names)
    index = {n: k for k, n in enumerate(names)}
    better = result.poset.better  # better[i, j]: j strictly better than i
    n = len(names)
    incomparable = sum(1 for i in range(n) for j in range(i + 1, n)
                       if not better[i, j] and not better[j, i])
    cols = ", ".join(c + (" (lower is better)" if c in result.lower_is_better else "")
                     for c in result.indicators)
    pairs = n * (n - 1) // 2
    lines = [f"One submission is above another when it is at least as good on every "
             f"indicator ({cols}) and better on one; {incomparable} of {pairs} "
             f"{plural(pairs, 'pair', 'pairs')} {plural(incomparable, 'is', 'are')} "
             "incomparable (each better on some indicator, or identical)."]
    k = len(result.rounds)
    if result.converged and k == 0:
        lines.append("That order already ranks the submissions: no CRF round was needed.")
    elif result.converged:
        lines.append(f"The cumulative rank frequency (CRF) operator ranked them in {k} "
                     f"round{'s' if k > 1 else ''}: each round puts one entry above another "
                     "when it is among the top r at least as often in the previous round's "
                     "orderings, for every rank r.")
    elif result.stop_reason == "no change" and k == 0:
        lines.append("The order was already stable: the cumulative rank frequency (CRF) "
                     "operator adds no comparison to it, so no iteration was needed; entries "
                     "left incomparable are ordered by expected rank E(rank).")
    elif result.stop_reason == "no change":
        lines.append(f"After {k} cumulative rank frequency (CRF) round{'s' if k > 1 else ''} "
                     "the order stopped changing (a further round adds no comparison); "
                     f"entries still incomparable are ordered by round {k}'s expected rank "
                     "E(rank).")
    else:
        lines.append(f"The CRF operator stopped at its round limit ({k}) before the "
                     "order was a ranking; entries left incomparable are ordered by "
                     "expected rank E(rank).")
    expected = result.deciding_expected_ranks
    tie_break = result.tie_break
    for tie in result.ties:
        group = list(tie["items"])
        level = ("have the same expected rank "
                 f"{float(expected[group[0]]):.3f}" if not result.converged
                 else "stay level" + (f" after round {k}" if k else ""))
        pairs = [(a, b) for x, a in enumerate(group) for b in group[x + 1:]]
        identical = [(a, b) for a, b in pairs if _values(result, a) == _values(result, b)]
        comparable = [(a, b) for a, b in pairs
                      if better[index[a], index[b]] or better[index[b], index[a]]]
        if identical and len(identical) == len(pairs):
            what = "tied: identical on every indicator"
        else:
            wins = _best_on(result, group)
            what = ("incomparable" + (f" ({'; '.join(wins)})" if wins else "")
                    + ("; " + ", ".join(f"{a} and {b} tied (identical)" for a, b in identical)
                       if identical else ""))
            if comparable:
                what += "; the CRF rounds made them level"
        if tie["by"] == "name":
            rule = "by name, as the tie-breaker" + (
                f" {tie_break!r} is equal or undefined for them" if tie_break else
                " column is missing")
        else:
            acc = tie.get("accuracy") or []
            numbers = " > ".join("undefined" if a is None else f"{a:.4f}" for a in acc)
            shown = tie_break or "accuracy"
            rule = f"by the tie-breaker, {shown} (higher first): {numbers}"
            if tie["by"] == "accuracy, then name":
                rule += ", then by name where equal"
        lines.append(f"{and_list(group)} {level} and are {what}; ordered {rule}.")
    return lines
