"""Whether groups fit on a config's nodes: the verifier's exhaustive placement search (a part of
solver.verify.rules' packing check)."""

from __future__ import annotations



def packs(nodes: int, gpn: int, bundles: list[float], loose: dict[float, int]) -> bool:
    """Can the bundles (each inside one node) and the loose groups be placed on `nodes` nodes?

    Bundles go to nodes by exhaustive search over the multiset of what the nodes have left
    (remembered, so equal states are searched once). Loose groups smaller than a node fill
    the bundles' leftovers, searched exhaustively too; the rest of them is counted against
    the nodes no bundle uses — the rule the planner itself uses for groups, exact for node
    shares dividing one another — and groups spanning nodes take any GPUs still free.
    """
    eps = 1e-9
    small = {c: n for c, n in loose.items() if c <= gpn}   # a group of a whole node fits no leftover
    spanning = sum(c * n for c, n in loose.items() if c > gpn)
    placed: dict[tuple, bool] = {}
    filled: dict[tuple, bool] = {}

    def place(i: int, lefts: tuple[float, ...]) -> bool:
        if len(lefts) > nodes:
            return False
        if i == len(bundles):
            return fill(lefts, tuple(sorted(small.items())))
        if (i, lefts) not in placed:
            options = [tuple(sorted(lefts[:k] + (left - bundles[i],) + lefts[k + 1:]))
                       for k, left in enumerate(lefts) if bundles[i] <= left + eps]
            options.append(tuple(sorted(lefts + (gpn - bundles[i],))))
            placed[i, lefts] = any(place(i + 1, option) for option in dict.fromkeys(options))
        return placed[i, lefts]

    def fill(lefts: tuple[float, ...], counts: tuple) -> bool:
        return fill_from(lefts, 0, counts, 0.0)

    def fill_from(lefts: tuple[float, ...], k: int, counts: tuple, spare: float) -> bool:
        """Leftovers k.. of the bundles' nodes get whole groups; `spare`: GPUs left in those before k."""
        key = (lefts, k, counts, round(spare, 6))
        if key in filled:
            return filled[key]
        if k == len(lefts):
            free = gpn * (nodes - len(lefts))
            rest = sum(c * n for c, n in counts)
            ok = rest <= free + eps and rest + spanning <= free + spare + eps
        else:
            have = dict(counts)
            shares = sorted((c for c in have if have[c] > 0), reverse=True)
            ok = any(fill_from(lefts, k + 1, tuple(sorted((c, n - taken.get(c, 0)) for c, n in have.items())),
                               spare + lefts[k] - sum(c * n for c, n in taken.items()))
                     for taken in fillings(lefts[k], shares, have))
        filled[key] = ok
        return ok

    return place(0, ())


def fillings(left: float, shares: list[float], counts: dict[float, int]):
    """Every way to put whole groups into one node's leftover, the fullest first (a few dozen at most)."""
    out: list[dict[float, int]] = []

    def walk(k: int, room: float, chosen: dict[float, int]) -> None:
        if k == len(shares):
            out.append(dict(chosen))
            return
        c = shares[k]
        for n in range(min(counts[c], int((room + 1e-9) // c)), -1, -1):
            chosen[c] = n
            walk(k + 1, room - n * c, chosen)
        chosen.pop(c, None)

    walk(0, left, {})
    return sorted(out, key=lambda f: -sum(c * n for c, n in f.items()))
