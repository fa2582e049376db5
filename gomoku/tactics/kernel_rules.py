"""The compiled moves-to-search of inner nodes: ``FreestyleRules.moves_to_search`` (root=False)
for a batch of positions in one call: fives and fours from the window classes, the blocks of a
four, the VCF check where the player to move has a three, the VCT leaf check at its depths."""

from __future__ import annotations

from numba import njit

from gomoku.tactics.kernel_board import (ATTACKER_FOUR, ATTACKER_THREE, DEFENDER_FOUR, KERNEL, board_views,
                                         empty_of_four, load, table_views, vcf_views)
from gomoku.tactics.kernel_solve import vcf_loaded, vct_loaded
from gomoku.tactics.kernel_vct import NEEDS_ROOM, WIN


@njit(nogil=True, **KERNEL)  # the GIL released while it runs
def inner_moves(tables, ws, cells, to_move, depth, least, vcf_nodes, vct_from, vct_to, vct_nodes,
                can_win, legal, calls):
    """For positions ``cells`` int8 [k, size + 1] with ``to_move`` [k] and ``depth`` [k]: whether the
    player to move wins by force (``can_win`` bool [k]) and the moves a node there searches
    (``legal`` bool [k, size], set to the empty points by the caller). Only positions whose first
    player has ``least`` stones are looked at; the VCF check within ``vcf_nodes``; VCT checks
    at depths ``vct_from`` to ``vct_to`` (none when vct_to < vct_from) within ``vct_nodes``.
    ``calls`` [2]: the VCF and VCT solves run, added to. Returns NEEDS_ROOM when a VCT solve
    outgrew the workspace (run it again in a larger one), else WIN."""
    T = table_views(tables)
    B, at = board_views(ws)
    X, at = vcf_views(ws, at)
    size = legal.shape[1]
    for i in range(cells.shape[0]):
        stones = 0
        for p in range(size):
            if cells[i, p] != 0:
                stones += 1
        if (stones + 1) // 2 < least:
            continue
        load(T, B, cells[i], to_move[i])
        mine = B.count[ATTACKER_FOUR] > 0
        if mine or B.count[DEFENDER_FOUR] > 0:  # complete my line, or else block theirs: only those points
            cl = ATTACKER_FOUR if mine else DEFENDER_FOUR
            legal[i, :] = False
            for j in range(B.count[cl]):
                legal[i, empty_of_four(T, B, B.members[cl, j])] = True
        can_win[i] = mine
        if not mine and B.count[ATTACKER_THREE] > 0:
            calls[0] += 1
            status, _, _ = vcf_loaded(T, B, X, vcf_nodes)
            can_win[i] = status == WIN
        if vct_from <= depth[i] <= vct_to and not can_win[i]:
            calls[1] += 1
            status, _, _ = vct_loaded(T, B, X, ws, at, vct_nodes, vcf_nodes)  # on the position loaded above
            if status == NEEDS_ROOM:
                return status
            can_win[i] = status == WIN
    return WIN


@njit(nogil=True, **KERNEL)  # the GIL released while it runs
def wins(tables, cells, moves, colours, won):
    """Whether the stone just placed at ``moves[i]`` (colour ``colours[i]``) completes a line in
    ``cells[i]``: into ``won`` bool [k] (``Geometry.wins``)."""
    T = table_views(tables)
    for i in range(cells.shape[0]):
        won[i] = False
        for j in range(T.through.shape[1]):
            w = T.through[moves[i], j]
            if w < 0:
                break
            line = True
            for p in range(T.windows.shape[1]):
                if cells[i, T.windows[w, p]] != colours[i]:
                    line = False
                    break
            if line:
                won[i] = True
                break
