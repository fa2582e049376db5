"""The compiled VCT search: the reference's proof-number search (``gomoku.tactics.vct``) as numba
kernels over the compiled threat board (``kernel_board``), node for node. The entry points that
Python calls are in ``kernel_solve``.

The proof-number DAG of one solve lives in the workspace (``store_views``): per node its proof and
disproof numbers, its replies (an AND node's: a slice of ``replies``) and, once expanded, its
children (a slice of ``child_node`` / ``child_move``); a hash map from position key to node links
transpositions. The descent is the reference's loop (df-pn's thresholds, computed exactly) over an
explicit path. When the replies or children outgrow their room the solve answers NEEDS_ROOM and
the caller runs it again in a larger workspace (the answer does not depend on the room).
"""

from __future__ import annotations

from collections import namedtuple

from numba import njit

from gomoku.tactics.kernel_board import (ATTACKER, ATTACKER_FOUR, ATTACKER_THREE, ATTACKER_TWO, BUDGET,
                                         DEFENDER_THREE, EXHAUSTED, H_CHILDREN, H_NODES, H_PER_POINT,
                                         H_REPLIES, H_SIZE, H_SLOTS, INTERRUPTED, KERNEL, KEY, NO_MOVE, NODES,
                                         STAMP, STORE_COUNTERS, board_views, clear_four_moves, contains,
                                         defender_blocks, four_moves,
                                         load, new_stamp, place, remove, slot, sort_small, table_views, tick,
                                         vcf, vcf_views)

INFINITE = 1 << 40  # the proof or disproof number of a solved node
LARGEST = INFINITE - 1  # the cap of a sum of unsolved nodes' numbers
LEAF_VCF_NODES = 40  # the VCF check's budget at each new position of the attacker's to move
WIN, NO_WIN, UNKNOWN, STOPPED, NEEDS_ROOM = range(5)  # a solve's status
OUT_OF_ROOM = -5  # prove's answer (not a status) when the replies or children outgrew their room
_UNDECIDED, _WON, _LOST = -1, 1, 0  # ``_status``'s answers (or EXHAUSTED / INTERRUPTED)

VctScratch = namedtuple("VctScratch", ["pair_count", "pairs", "point_index", "three_points", "three_count",
                                       "three_sets", "marks", "listed", "candidates"])
Store = namedtuple("Store", ["pn", "dn", "reply_start", "reply_count", "child_start", "child_count", "replies",
                             "child_node", "child_move", "table_keys", "table_nodes", "table_stamps", "path",
                             "path_moves", "pn_limits", "dn_limits", "used"])


@njit(**KERNEL)
def _cut(ws, at, length):
    """The view ``ws[at:at + length]`` and where the next one starts."""
    return ws[at:at + length], at + length


@njit(**KERNEL)
def vct_views(ws, at):
    """The workspace's VCT scratch and store, from ``at`` on (after the board and VCF scratch)."""
    size, per_point = ws[H_SIZE], ws[H_PER_POINT]
    pair_count, at = _cut(ws, at, size)
    pairs, at = _cut(ws, at, 2 * size * per_point)
    point_index, at = _cut(ws, at, size)
    three_points, at = _cut(ws, at, size)
    three_count, at = _cut(ws, at, size)
    three_sets, at = _cut(ws, at, size * (2 * per_point + 2))
    marks, at = _cut(ws, at, size)
    listed, at = _cut(ws, at, 2 * size + 2)
    candidates, at = _cut(ws, at, size)
    Y = VctScratch(pair_count, pairs.reshape((size, per_point, 2)), point_index, three_points, three_count,
                   three_sets.reshape((size, 2 * per_point + 2)), marks, listed, candidates)
    nodes, replies, children, slots = ws[H_NODES], ws[H_REPLIES], ws[H_CHILDREN], ws[H_SLOTS]
    pn, at = _cut(ws, at, nodes)
    dn, at = _cut(ws, at, nodes)
    reply_start, at = _cut(ws, at, nodes)
    reply_count, at = _cut(ws, at, nodes)
    child_start, at = _cut(ws, at, nodes)
    child_count, at = _cut(ws, at, nodes)
    replies_, at = _cut(ws, at, replies)
    child_node, at = _cut(ws, at, children)
    child_move, at = _cut(ws, at, children)
    table_keys, at = _cut(ws, at, slots)
    table_nodes, at = _cut(ws, at, slots)
    table_stamps, at = _cut(ws, at, slots)
    path, at = _cut(ws, at, size + 2)
    path_moves, at = _cut(ws, at, size + 2)
    pn_limits, at = _cut(ws, at, size + 2)
    dn_limits, at = _cut(ws, at, size + 2)
    used, at = _cut(ws, at, STORE_COUNTERS)
    Z = Store(pn, dn, reply_start, reply_count, child_start, child_count, replies_, child_node, child_move,
              table_keys, table_nodes, table_stamps, path, path_moves, pn_limits, dn_limits, used)
    return Y, Z


@njit(**KERNEL)
def quick(T, B, X, budget):
    """The first move of a VCF found within ``budget`` more nodes, else NO_MOVE; EXHAUSTED only
    when the solve's own budget ran out, INTERRUPTED when stopped."""
    total = B.meta[BUDGET]
    local = min(total, B.meta[NODES] + budget)
    B.meta[BUDGET] = local
    move = vcf(T, B, X)
    B.meta[BUDGET] = total
    if move == EXHAUSTED and local != total:
        return NO_MOVE
    return move


@njit(**KERNEL)
def _pairs_of_twos(T, B, Y):
    """For each empty point of one of the attacker's twos, the other two empty points of it."""
    windows = T.windows
    for i in range(B.count[ATTACKER_TWO]):
        w = B.members[ATTACKER_TWO, i]
        k = 0
        for j in range(windows.shape[1]):
            p = windows[w, j]
            if B.cells[p] == 0:
                Y.listed[k] = p
                k += 1
        for a in range(3):
            point = Y.listed[a]
            c = Y.pair_count[point]
            Y.pairs[point, c, 0] = Y.listed[(a + 1) % 3]
            Y.pairs[point, c, 1] = Y.listed[(a + 2) % 3]
            Y.pair_count[point] = c + 1


@njit(**KERNEL)
def _copy(target, source, n):
    """``target[:n] = source[:n]``, entry by entry (a slice assignment would allocate a copy)."""
    for j in range(n):
        target[j] = source[j]


@njit(**KERNEL)
def _judge(T, B, X, Y, move, replies, start):
    """The attacker's stone at ``move`` judged without placing it: -1 when it is no threat, else
    the number of the defender's replies to search, written into ``replies[start:]`` ascending (a
    four: its five point; a double: none; a three: every defence and counter-four). The room for
    them is the caller's to check (at most one a point)."""
    windows = T.windows
    five_count, five_points, touched = X.five_count, X.five_points, X.touched
    index, points, counts, sets, marks, listed = Y.point_index, Y.three_points, Y.three_count, Y.three_sets, \
        Y.marks, Y.listed
    made = five_count[move]
    if made > 1:
        return 0  # a double: the attack wins
    if made == 1:
        replies[start] = five_points[move, 0]
        return 1
    # The three points once the stone is there (a stone on one makes a double): those it had, and
    # the empty points of each two it fills, each with its five points (index: position + 1).
    n = 0
    for i in range(touched[-1]):
        p = touched[i]
        if five_count[p] > 1:
            index[p] = n + 1
            points[n] = p
            counts[n] = five_count[p]
            _copy(sets[n], five_points[p], five_count[p])
            n += 1
    for k in range(Y.pair_count[move]):
        for side in range(2):
            point, other = Y.pairs[move, k, side], Y.pairs[move, k, 1 - side]
            t = index[point] - 1
            if t < 0:
                t = n
                index[point] = t + 1
                points[t] = point
                counts[t] = five_count[point]
                _copy(sets[t], five_points[point], five_count[point])
                n += 1
            if not contains(sets[t], counts[t], other):
                sets[t, counts[t]] = other
                counts[t] += 1
    kept = 0
    for t in range(n):
        index[points[t]] = 0
        if counts[t] > 1:
            points[kept] = points[t]
            counts[kept] = counts[t]
            _copy(sets[kept], sets[t], counts[t])  # row kept <= t
            kept += 1
    if kept == 0:
        return -1
    # The candidates (marks 1): the three points and their five points; the replies (marks 3):
    # the candidates that stop every three point, and the defender's counter-fours.
    n_listed = 0
    for t in range(kept):
        for j in range(-1, counts[t]):
            r = points[t] if j < 0 else sets[t, j]
            if marks[r] == 0:
                marks[r] = 1
                listed[n_listed] = r
                n_listed += 1
    n_replies = 0
    for c in range(n_listed):
        r = listed[c]
        stops = True
        for t in range(kept):
            if r != points[t] and counts[t] - (1 if contains(sets[t], counts[t], r) else 0) >= 2:
                stops = False
                break
        if stops:
            marks[r] = 3
            replies[start + n_replies] = r
            n_replies += 1
    for i in range(B.count[DEFENDER_THREE]):  # counter-fours: the defender's threes ``move`` does not cut
        w = B.members[DEFENDER_THREE, i]
        if contains(windows[w], windows.shape[1], move):
            continue
        for j in range(windows.shape[1]):
            p = windows[w, j]
            if B.cells[p] == 0 and marks[p] != 3:
                if marks[p] == 0:
                    listed[n_listed] = p
                    n_listed += 1
                marks[p] = 3
                replies[start + n_replies] = p
                n_replies += 1
    for c in range(n_listed):
        marks[listed[c]] = 0
    sort_small(replies[start:], n_replies)
    return n_replies


@njit(**KERNEL)
def _status(T, B, X):
    """For the attacker to move here: _WON (a win found at once), _LOST, _UNDECIDED, or the VCF
    check's EXHAUSTED / INTERRUPTED."""
    if B.count[ATTACKER_FOUR] > 0:
        return _WON
    n_blocks = defender_blocks(T, B, X.blocks)
    if n_blocks > 1:
        return _LOST
    move = quick(T, B, X, LEAF_VCF_NODES)
    if move == EXHAUSTED or move == INTERRUPTED:
        return move
    if move != NO_MOVE:
        return _WON
    if n_blocks == 0 and B.count[ATTACKER_TWO] == 0 and B.count[ATTACKER_THREE] == 0:
        return _LOST  # no threat to make
    return _UNDECIDED


@njit(**KERNEL)
def _slot(B, Z, key):
    """The node table's slot of ``key``: its entry, or the empty slot where it goes."""
    return slot(Z.table_keys, Z.table_stamps, B.meta[STAMP], key)


@njit(**KERNEL)
def _table_entry(T, B, Z, colour, move):
    """The position after ``colour``'s stone at ``move``: its key, its table slot, and its node
    there (-1: none yet)."""
    key = B.meta[KEY] ^ T.keys[colour, move]
    entry = _slot(B, Z, key)
    return key, entry, Z.table_nodes[entry] if Z.table_stamps[entry] == B.meta[STAMP] else -1


@njit(**KERNEL)
def _insert(B, Z, entry, key, node):
    Z.table_keys[entry] = key
    Z.table_nodes[entry] = node
    Z.table_stamps[entry] = B.meta[STAMP]


@njit(**KERNEL)
def _choice(numbers, others, child_node, first, n):
    """Over the children ``child_node[first:first + n]``: the index ``min`` chooses by
    ``numbers`` (the first of the smallest), the limit below which that number keeps it chosen
    (under every earlier number, at most every later one), and the sum of the ``others``."""
    index = 0
    total = 0
    for i in range(n):
        child = child_node[first + i]
        total += others[child]
        if numbers[child] < numbers[child_node[first + index]]:
            index = i
    earlier = INFINITE + 1
    for i in range(index):
        earlier = min(earlier, numbers[child_node[first + i]])
    later = INFINITE
    for i in range(index + 1, n):
        later = min(later, numbers[child_node[first + i]])
    return index, min(earlier, later + 1), total


@njit(**KERNEL)
def _link(Z, used, child, move):
    """Append ``child``, reached by ``move``, to the children being made (``used[2]`` of them)."""
    Z.child_node[used[2]] = child
    Z.child_move[used[2]] = move
    used[2] += 1


@njit(**KERNEL)
def _new_node(Z, node, pn, dn):
    Z.pn[node] = pn
    Z.dn[node] = dn
    Z.child_start[node] = -1


@njit(**KERNEL)
def _expand_or(T, B, X, Y, Z, node, used):
    """Children of an OR node: the attacker's threats (an AND node each), judged without placing
    their stones; a position already in the table is linked, not judged. ``used``: the nodes,
    replies and children so far (updated). 0, or EXHAUSTED / INTERRUPTED / OUT_OF_ROOM."""
    size = B.cells.shape[0]
    attacker = B.meta[ATTACKER]
    Z.child_start[node] = used[2]
    n_blocks = defender_blocks(T, B, X.blocks)
    if n_blocks > 1:  # two cannot both be blocked: no child
        Z.child_count[node] = 0
        return 0
    four_moves(T, B, X)
    _pairs_of_twos(T, B, Y)
    candidates = Y.candidates
    n_candidates = 0
    if n_blocks == 1:
        candidates[0] = X.blocks[0]
        n_candidates = 1
    else:
        for i in range(X.touched[-1]):
            candidates[n_candidates] = X.touched[i]
            n_candidates += 1
        for p in range(size):
            if Y.pair_count[p] > 0 and X.five_count[p] == 0:
                candidates[n_candidates] = p
                n_candidates += 1
        sort_small(candidates, n_candidates)
    failed = 0
    if used[2] + n_candidates > Z.child_node.shape[0]:
        failed = OUT_OF_ROOM
    for c in range(n_candidates if failed == 0 else 0):
        move = candidates[c]
        key, entry, child = _table_entry(T, B, Z, attacker, move)
        if child < 0:
            failed = tick(B)
            if failed:
                break
            if used[1] + size > Z.replies.shape[0]:
                failed = OUT_OF_ROOM
                break
            made = _judge(T, B, X, Y, move, Z.replies, used[1])
            if made < 0:
                continue
            child = used[0]
            used[0] += 1
            _new_node(Z, child, made, 1)
            Z.reply_start[child] = used[1]
            Z.reply_count[child] = made
            used[1] += made
            _insert(B, Z, entry, key, child)
        _link(Z, used, child, move)
        if Z.pn[child] == 0:
            break  # proved
    clear_four_moves(X)
    for p in range(size):
        Y.pair_count[p] = 0
    Z.child_count[node] = used[2] - Z.child_start[node]
    return failed


@njit(**KERNEL)
def _expand_and(T, B, X, Z, node, used):
    """Children of an AND node (its attacking move placed): the defender's replies, each an OR
    node judged at once where it can be (a five point, two to block, a double, a VCF)."""
    defender = 3 - B.meta[ATTACKER]
    Z.child_start[node] = used[2]
    if used[2] + Z.reply_count[node] > Z.child_node.shape[0]:
        return OUT_OF_ROOM
    for r in range(Z.reply_start[node], Z.reply_start[node] + Z.reply_count[node]):
        reply = Z.replies[r]
        key, entry, child = _table_entry(T, B, Z, defender, reply)
        if child < 0:
            failed = tick(B)
            if failed:
                return failed
            place(T, B, reply, defender)
            won = _status(T, B, X)
            remove(T, B, reply, defender)
            if won == EXHAUSTED or won == INTERRUPTED:
                return won
            child = used[0]
            used[0] += 1
            if won == _UNDECIDED:
                _new_node(Z, child, 1, 1)
            elif won == _WON:
                _new_node(Z, child, 0, INFINITE)
            else:
                _new_node(Z, child, INFINITE, 0)
            _insert(B, Z, entry, key, child)
        _link(Z, used, child, reply)
        if Z.dn[child] == 0:
            break  # disproved
    Z.child_count[node] = used[2] - Z.child_start[node]
    return 0


@njit(**KERNEL)
def prove(T, B, X, Y, Z):
    """Proof-number search from the loaded position (attacker to move), after its VCF check:
    (WIN, its first move), (NO_WIN, NO_MOVE) or (EXHAUSTED / INTERRUPTED / OUT_OF_ROOM, NO_MOVE);
    the position is left as it was. The reference's loop: from the root down to a
    most-proving node, expand it, numbers back up, staying below a node while the descent from the
    root would choose it again (df-pn's thresholds, ties included)."""
    attacker = B.meta[ATTACKER]
    defender = 3 - attacker
    used = Z.used  # nodes, replies, children
    used[0], used[1], used[2] = 1, 0, 0
    _new_node(Z, 0, 1, 1)
    _insert(B, Z, _slot(B, Z, B.meta[KEY]), B.meta[KEY], 0)
    pn, dn, child_node, child_move = Z.pn, Z.dn, Z.child_node, Z.child_move
    Z.path[0] = 0
    Z.pn_limits[0] = INFINITE
    Z.dn_limits[0] = INFINITE
    depth = 0
    while True:
        node = Z.path[depth]
        or_node = depth % 2 == 0
        if Z.child_start[node] < 0:
            failed = _expand_or(T, B, X, Y, Z, node, used) if or_node else _expand_and(T, B, X, Z, node, used)
            if failed:
                for d in range(depth, 0, -1):  # take back the path: its move at d was the parent's player's
                    remove(T, B, Z.path_moves[d], attacker if (d - 1) % 2 == 0 else defender)
                return failed, NO_MOVE
        # the node's numbers from its children's (an OR node: the smallest proof number, the
        # disproof numbers' sum; an AND node the other way round), and the child to descend to
        first, n = Z.child_start[node], Z.child_count[node]
        if or_node:
            index, chosen, total = _choice(pn, dn, child_node, first, n)
        else:
            index, chosen, total = _choice(dn, pn, child_node, first, n)
        if n == 0:
            pn[node], dn[node] = (INFINITE, 0) if or_node else (0, INFINITE)
        elif or_node:
            smallest = pn[child_node[first + index]]
            pn[node], dn[node] = (0, INFINITE) if smallest == 0 else (INFINITE, 0) if total == 0 else \
                (smallest, min(total, LARGEST))
        else:
            smallest = dn[child_node[first + index]]
            pn[node], dn[node] = (INFINITE, 0) if smallest == 0 else (0, INFINITE) if total == 0 else \
                (min(total, LARGEST), smallest)
        pn_limit, dn_limit = Z.pn_limits[depth], Z.dn_limits[depth]
        if pn[node] and dn[node] and pn[node] < pn_limit and dn[node] < dn_limit:
            child = child_node[first + index]
            if or_node:  # the child easiest to prove; the others' disproof numbers add up
                Z.pn_limits[depth + 1] = min(pn_limit, chosen)
                Z.dn_limits[depth + 1] = INFINITE if dn_limit == INFINITE else dn_limit - (total - dn[child])
                place(T, B, child_move[first + index], attacker)
            else:
                Z.pn_limits[depth + 1] = INFINITE if pn_limit == INFINITE else pn_limit - (total - pn[child])
                Z.dn_limits[depth + 1] = min(dn_limit, chosen)
                place(T, B, child_move[first + index], defender)
            depth += 1
            Z.path[depth] = child
            Z.path_moves[depth] = child_move[first + index]
        elif depth == 0:
            break  # solved
        else:  # back up: the parent is brought up to date and chooses again
            remove(T, B, Z.path_moves[depth], defender if or_node else attacker)
            depth -= 1
    if pn[0] == 0:
        for i in range(Z.child_start[0], Z.child_start[0] + Z.child_count[0]):
            if pn[child_node[i]] == 0:
                return WIN, child_move[i]
    return NO_WIN, NO_MOVE
