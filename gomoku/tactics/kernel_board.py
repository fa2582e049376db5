"""The compiled threat board and VCF search: numba kernels over flat integer arrays.

The same bookkeeping and the same search as the reference solvers (``ThreatBoard`` and its
``_vcf`` in ``gomoku.tactics.vcf``), written for ``numba.njit``: the answers (status, first move,
nodes) are the reference's, which the tests check position by position.

Two flat int64 arrays carry everything, so that a call from Python passes two arrays (a call
costs about a microsecond; a solve is one call):
- the *tables* of one board shape (``build_tables``; ``table_views`` names their parts): the points
  of each window, the windows through each point (padded with -1), the class of each window code,
  the Zobrist keys by colour and point, the sum of each window's points;
- the *workspace* of one solver (``workspace``; ``board_views`` and ``vcf_views`` name its parts): a
  position (cells; each window's code = attacker stones + (n + 1) * defender stones; the windows of
  each class, as unordered lists; meta: the key, nodes, budget, attacker, stop flag) and the
  search's scratch (the five points a stone at each point would make, the VCF frames of an
  explicit stack instead of recursion, and the set of refuted positions: an open-addressing hash
  set of position keys whose entries count only under the current stamp).
The search never copies a board: stones are placed and taken back (``place``, ``remove``).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

# Window classes, from the attacker's point of view: the reference's numbering (kernel_vct's too).
from gomoku.tactics.threats import (ATTACKER_FOUR, ATTACKER_THREE, ATTACKER_TWO, DEFENDER_FOUR,  # noqa: F401
                                    DEFENDER_THREE, NONE)

# The options of every kernel: cached, and without numba's reference counting of arrays
# (``_nrt=False``). The kernels allocate nothing (every array is a view of the tables or of the
# workspace, which Python owns), and the counting, an atomic operation on each array a helper
# takes or cuts, cost more than a small solve itself: a VCF solve of two nodes took 3x as long
# with it (numba issue #2350 shows the same). numba refuses to compile an allocation without it.
KERNEL = {"cache": True, "_nrt": False}
CLASSES = 6
# meta's entries: the Zobrist key of the stones placed since ``load``, the nodes counted, the node
# budget, the attacker's colour, the stop flag (set from outside while a search runs: looked at
# on the first node and every STOP_CHECK_NODES, where the reference calls its ``stop``), the stamp
# of the refuted set's current entries.
KEY, NODES, BUDGET, ATTACKER, STOP, STAMP = range(6)
META = 6
STOP_CHECK_NODES = 16
NO_MOVE = -1
EXHAUSTED = -2  # a search's answer when the node budget ran out (the position is left as it was)
INTERRUPTED = -4  # ... when the stop flag was seen set (likewise)
OPEN = -3  # a VCF frame whose moves are still to try

# The workspace's header: the sizes its views are cut by.
H_SIZE, H_WINDOWS, H_PER_POINT, H_DEPTH, H_REFUTED, H_NODES, H_REPLIES, H_CHILDREN, H_SLOTS = range(9)
HEADER = 9
STORE_COUNTERS = 3  # the VCT store's counters of one solve: nodes, replies and children used (kernel_vct)

Tables = namedtuple("Tables", ["windows", "through", "classes", "keys", "window_sum"])
Board = namedtuple("Board", ["cells", "code", "where", "members", "count", "meta"])
VcfScratch = namedtuple("VcfScratch", ["five_count", "five_points", "touched", "frames", "singles", "refuted",
                                       "refuted_stamps", "blocks"])


def build_tables(windows: np.ndarray, through: np.ndarray, classes: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The tables of one board shape as one int64 array: windows [W, n], through [size, per_point]
    (-1 padding), classes [(n + 1) ** 2], keys [3, size]."""
    (n_windows, n), (size, per_point) = windows.shape, through.shape
    header = [size, n_windows, n, per_point]
    parts = [np.asarray(header), windows.ravel(), through.ravel(), classes.ravel(), keys.ravel(), windows.sum(axis=1)]
    return np.concatenate([np.asarray(p, dtype=np.int64) for p in parts])


@njit(**KERNEL)
def table_views(t):
    size, n_windows, n, per_point = t[0], t[1], t[2], t[3]
    at = 4
    windows = t[at:at + n_windows * n].reshape((n_windows, n))
    at += n_windows * n
    through = t[at:at + size * per_point].reshape((size, per_point))
    at += size * per_point
    classes = t[at:at + (n + 1) ** 2]
    at += (n + 1) ** 2
    keys = t[at:at + 3 * size].reshape((3, size))
    at += 3 * size
    return Tables(windows, through, classes, keys, t[at:at + n_windows])


def capacity(budget: int) -> int:
    """The slots of a hash table for ``budget`` nodes' entries (a power of two, at most half full)."""
    slots = 64
    while slots < 2 * (budget + 2):
        slots *= 2
    return slots


def workspace(size: int, n_windows: int, per_point: int, budget: int, replies: int = 0, children: int = 0) -> np.ndarray:
    """A solver's workspace for searches of up to ``budget`` nodes (``replies`` and ``children``:
    the VCT's room for those; see ``kernel_vct``)."""
    depth = min(size // 2 + 2, budget + 2)  # a VCF frame places two stones and costs a node
    header = [size, n_windows, per_point, depth, capacity(budget), budget + 2, replies, children,
              capacity(budget) if replies else 0]
    ws = np.zeros(HEADER + _extent(*header), dtype=np.int64)
    ws[:HEADER] = header
    return ws


def meta_offset(size: int, n_windows: int) -> int:
    """Where ``board_views``' meta starts in a workspace."""
    return HEADER + size + 2 * n_windows + CLASSES * n_windows + CLASSES


def _extent(size, n_windows, per_point, depth, refuted, nodes, replies, children, slots):
    board = size + 2 * n_windows + CLASSES * n_windows + CLASSES + META
    vcf = size + size * per_point + (2 * size + 1) + 3 * depth + 2 * (depth * size + 1) + 2 * refuted + size
    vct = 0
    if replies:  # the VCT's scratch and store (kernel_vct.vct_views)
        vct = 6 * size + 2 * size * per_point + size * (2 * per_point + 2) + (2 * size + 2)
        vct += 6 * nodes + replies + 2 * children + 2 * slots + 4 * (size + 2) + slots + STORE_COUNTERS
    return board + vcf + vct


@njit(**KERNEL)
def board_views(ws):
    size, n_windows = ws[H_SIZE], ws[H_WINDOWS]
    at = HEADER
    cells = ws[at:at + size]
    at += size
    code = ws[at:at + n_windows]
    at += n_windows
    where = ws[at:at + n_windows]
    at += n_windows
    members = ws[at:at + CLASSES * n_windows].reshape((CLASSES, n_windows))
    at += CLASSES * n_windows
    count = ws[at:at + CLASSES]
    at += CLASSES
    return Board(cells, code, where, members, count, ws[at:at + META]), at + META


@njit(**KERNEL)
def vcf_views(ws, at):
    size, per_point, depth, refuted = ws[H_SIZE], ws[H_PER_POINT], ws[H_DEPTH], ws[H_REFUTED]
    five_count = ws[at:at + size]
    at += size
    five_points = ws[at:at + size * per_point].reshape((size, per_point))
    at += size * per_point
    touched = ws[at:at + 2 * size + 1]
    at += 2 * size + 1
    frames = ws[at:at + 3 * depth].reshape((depth, 3))
    at += 3 * depth
    singles = ws[at:at + 2 * (depth * size + 1)].reshape((depth * size + 1, 2))
    at += 2 * (depth * size + 1)
    keys = ws[at:at + refuted]
    at += refuted
    stamps = ws[at:at + refuted]
    at += refuted
    return VcfScratch(five_count, five_points, touched, frames, singles, keys, stamps, ws[at:at + size]), at + size


# ---------------------------------------------------------------------------- the position
@njit(**KERNEL)
def load(T, B, cells_in, attacker):
    """Set up the position ``cells_in`` (int8 [size] or longer) for ``attacker`` (1 or 2)."""
    windows, classes = T.windows, T.classes
    base = windows.shape[1] + 1
    for p in range(B.cells.shape[0]):
        B.cells[p] = cells_in[p]
    B.count[:] = 0
    for w in range(windows.shape[0]):
        mine = 0
        theirs = 0
        for i in range(windows.shape[1]):
            c = B.cells[windows[w, i]]
            if c == attacker:
                mine += 1
            elif c != 0:
                theirs += 1
        code = mine + base * theirs
        B.code[w] = code
        if classes[code] != NONE:
            _add(B, classes[code], w)
    B.meta[KEY] = 0
    B.meta[NODES] = 0
    B.meta[ATTACKER] = attacker


@njit(**KERNEL)
def _add(B, cl, w):
    B.where[w] = B.count[cl]
    B.members[cl, B.count[cl]] = w
    B.count[cl] += 1


@njit(**KERNEL)
def _discard(B, cl, w):
    i = B.where[w]
    last = B.members[cl, B.count[cl] - 1]
    B.members[cl, i] = last
    B.where[last] = i
    B.count[cl] -= 1


@njit(**KERNEL)
def _update(T, B, point, delta):
    through, classes = T.through, T.classes
    for j in range(through.shape[1]):
        w = through[point, j]
        if w < 0:
            break
        before = B.code[w]
        B.code[w] = before + delta
        cb = classes[before]
        ca = classes[before + delta]
        if cb != ca:  # the window's class changes: move it between the lists
            if cb != NONE:
                _discard(B, cb, w)
            if ca != NONE:
                _add(B, ca, w)


@njit(**KERNEL)
def place(T, B, point, colour):
    _update(T, B, point, 1 if colour == B.meta[ATTACKER] else T.windows.shape[1] + 1)
    B.cells[point] = colour
    B.meta[KEY] ^= T.keys[colour, point]


@njit(**KERNEL)
def remove(T, B, point, colour):
    _update(T, B, point, -1 if colour == B.meta[ATTACKER] else -(T.windows.shape[1] + 1))
    B.cells[point] = 0
    B.meta[KEY] ^= T.keys[colour, point]


@njit(**KERNEL)
def tick(B):
    """Count one node: 0, or EXHAUSTED past the budget (the count unchanged), or INTERRUPTED when
    the stop flag is set on a node where the reference would call its ``stop``."""
    meta = B.meta
    if meta[NODES] >= meta[BUDGET]:
        return EXHAUSTED
    meta[NODES] += 1
    if meta[STOP] != 0 and meta[NODES] % STOP_CHECK_NODES == 1:
        return INTERRUPTED
    return 0


@njit(**KERNEL)
def empty_of_four(T, B, w):
    """The empty point of a window holding n - 1 stones."""
    total = T.window_sum[w]
    for i in range(T.windows.shape[1]):
        p = T.windows[w, i]
        if B.cells[p] != 0:
            total -= p
    return total


@njit(**KERNEL)
def defender_blocks(T, B, out):
    """The distinct five points of the defender (its fours' empty points) into ``out``; how many."""
    found = 0
    for i in range(B.count[DEFENDER_FOUR]):
        p = empty_of_four(T, B, B.members[DEFENDER_FOUR, i])
        if not contains(out, found, p):
            out[found] = p
            found += 1
    return found


@njit(**KERNEL)
def smallest_five_point(T, B):
    """The smallest empty point of the attacker's fours (it has one: the caller checked)."""
    best = -1
    for i in range(B.count[ATTACKER_FOUR]):
        p = empty_of_four(T, B, B.members[ATTACKER_FOUR, i])
        if best < 0 or p < best:
            best = p
    return best


@njit(**KERNEL)
def contains(values, n, v):
    for i in range(n):
        if values[i] == v:
            return True
    return False


@njit(**KERNEL)
def sort_small(values, n):
    """Sort ``values[:n]`` in place (insertion sort: the lists here are short)."""
    for i in range(1, n):
        v = values[i]
        j = i - 1
        while j >= 0 and values[j] > v:
            values[j + 1] = values[j]
            j -= 1
        values[j + 1] = v


# ---------------------------------------------------------------------------- scratch
@njit(**KERNEL)
def slot(keys, stamps, stamp, key):
    """The slot of ``key`` in an open-addressing table (``keys``, a power of two long, at most half
    full; an entry counts only under the current ``stamp``): its entry, or the empty slot where it
    goes. The refuted set here and the VCT's node table (kernel_vct) are such tables."""
    mask = keys.shape[0] - 1
    i = key & mask
    while stamps[i] == stamp and keys[i] != key:
        i = (i + 1) & mask
    return i


@njit(**KERNEL)
def is_refuted(B, X, key):
    return X.refuted_stamps[slot(X.refuted, X.refuted_stamps, B.meta[STAMP], key)] == B.meta[STAMP]


@njit(**KERNEL)
def add_refuted(B, X, key):
    i = slot(X.refuted, X.refuted_stamps, B.meta[STAMP], key)
    X.refuted[i] = key
    X.refuted_stamps[i] = B.meta[STAMP]


@njit(**KERNEL)
def four_moves(T, B, X):
    """The attacker's four-making moves: for each empty point of one of its threes, the distinct
    five points a stone there makes (``five_count``, ``five_points``); the points are listed in
    ``touched`` (how many: its last entry). ``clear_four_moves`` undoes it."""
    windows = T.windows
    five_count, five_points, touched = X.five_count, X.five_points, X.touched
    n_touched = 0
    for i in range(B.count[ATTACKER_THREE]):
        w = B.members[ATTACKER_THREE, i]
        first = -1
        second = -1
        for j in range(windows.shape[1]):
            p = windows[w, j]
            if B.cells[p] == 0:
                if first < 0:
                    first = p
                else:
                    second = p
        for point, other in ((first, second), (second, first)):
            k = five_count[point]
            if not contains(five_points[point], k, other):
                if k == 0:
                    touched[n_touched] = point
                    n_touched += 1
                five_points[point, k] = other
                five_count[point] = k + 1
    touched[-1] = n_touched
    return n_touched


@njit(**KERNEL)
def clear_four_moves(X):
    for i in range(X.touched[-1]):
        X.five_count[X.touched[i]] = 0
    X.touched[-1] = 0


# ---------------------------------------------------------------------------- VCF
@njit(**KERNEL)
def _vcf_frame(T, B, X, depth):
    """Open VCF frame ``depth`` at the current position: a move (>= 0: won at once, by a five
    point or a double four), NO_MOVE (lost at once), or OPEN: its singles (a four with exactly one
    five point, and the forced reply) are stacked in ascending order, to be tried."""
    five_count, five_points, touched, frames, singles = X.five_count, X.five_points, X.touched, X.frames, X.singles
    if B.count[ATTACKER_FOUR] > 0:
        return smallest_five_point(T, B)
    n_blocks = defender_blocks(T, B, X.blocks)
    if n_blocks > 1:
        return NO_MOVE  # two points to block and no five of our own
    n_touched = four_moves(T, B, X)
    base = 0 if depth == 0 else frames[depth - 1, 0] + frames[depth - 1, 1]
    n_singles = 0
    result = OPEN
    if n_blocks == 1:  # the block must be a four
        block = X.blocks[0]
        if five_count[block] > 1:
            result = block
        elif five_count[block] == 1:
            singles[base, 0] = block
            singles[base, 1] = five_points[block, 0]
            n_singles = 1
        else:
            result = NO_MOVE
    else:
        sort_small(touched, n_touched)
        for i in range(n_touched):
            move = touched[i]
            if five_count[move] > 1:
                result = move  # a double four (or an open four): the defender cannot block both
                break
            singles[base + n_singles, 0] = move
            singles[base + n_singles, 1] = five_points[move, 0]
            n_singles += 1
        if result == OPEN and n_singles == 0:
            result = NO_MOVE
    clear_four_moves(X)
    frames[depth, 0] = base
    frames[depth, 1] = n_singles
    frames[depth, 2] = 0
    return result


@njit(**KERNEL)
def vcf(T, B, X):
    """The first move of a VCF for the attacker to move, NO_MOVE, EXHAUSTED when the node budget
    ran out or INTERRUPTED when stopped (the position is then left as it was, and nothing of the
    search in flight is remembered). Refuted positions go into the scratch's set (the caller
    empties it once per solve: ``new_stamp``)."""
    frames, singles = X.frames, X.singles
    attacker = B.meta[ATTACKER]
    defender = 3 - attacker
    depth = 0
    result = _vcf_frame(T, B, X, 0)
    while True:
        if result == OPEN:  # try the frame's next single
            if frames[depth, 2] == frames[depth, 1]:
                result = NO_MOVE
                continue
            i = frames[depth, 0] + frames[depth, 2]
            frames[depth, 2] += 1
            failed = tick(B)
            if failed:
                for d in range(depth - 1, -1, -1):  # take back every single in flight
                    j = frames[d, 0] + frames[d, 2] - 1
                    remove(T, B, singles[j, 1], defender)
                    remove(T, B, singles[j, 0], attacker)
                return failed
            place(T, B, singles[i, 0], attacker)
            place(T, B, singles[i, 1], defender)
            if is_refuted(B, X, B.meta[KEY]):
                remove(T, B, singles[i, 1], defender)
                remove(T, B, singles[i, 0], attacker)
                continue
            depth += 1
            result = _vcf_frame(T, B, X, depth)
            continue
        # frame ``depth`` is decided: won (a move) or lost; back to its parent
        if depth == 0:
            return result
        depth -= 1
        i = frames[depth, 0] + frames[depth, 2] - 1
        if result == NO_MOVE:
            add_refuted(B, X, B.meta[KEY])
        remove(T, B, singles[i, 1], defender)
        remove(T, B, singles[i, 0], attacker)
        result = singles[i, 0] if result != NO_MOVE else OPEN


@njit(**KERNEL)
def new_stamp(B):
    """Empty the refuted set: its entries count only under the current stamp."""
    B.meta[STAMP] += 1
