"""The compiled solvers' entry points, the kernels Python calls (``gomoku.tactics.compiled``):
``vcf_solve``, ``vct_solve``, ``vcf_defences``, ``vct_defences``; each returns a status of
``kernel_vct`` (WIN, NO_WIN, UNKNOWN, STOPPED, NEEDS_ROOM) and releases the GIL while it runs.
``vcf_loaded`` and ``vct_loaded`` solve the position already loaded in the board: ``kernel_rules``
runs them inside its own loop on the position it loaded for its fours check."""

from __future__ import annotations

from numba import njit

from gomoku.tactics.kernel_board import (BUDGET, EXHAUSTED, INTERRUPTED, KERNEL, NO_MOVE, NODES, board_views,
                                         load, new_stamp, place, remove, table_views, vcf, vcf_views)
from gomoku.tactics.kernel_vct import NEEDS_ROOM, NO_WIN, OUT_OF_ROOM, STOPPED, UNKNOWN, WIN, prove, quick, vct_views


@njit(**KERNEL)
def vct_loaded(T, B, X, ws, at, budget, vcf_nodes):
    """The VCT solve of the position loaded in ``B`` (left as it was): (status, move, nodes). The
    VCT's own views (``at`` on in ``ws``) are cut only when its VCF check fails."""
    B.meta[NODES] = 0
    B.meta[BUDGET] = budget
    new_stamp(B)
    move = quick(T, B, X, min(budget, vcf_nodes))
    if move >= 0:
        return WIN, move, B.meta[NODES]
    if move == EXHAUSTED or move == INTERRUPTED:
        return (UNKNOWN if move == EXHAUSTED else STOPPED), NO_MOVE, B.meta[NODES]
    Y, Z = vct_views(ws, at)
    outcome, move = prove(T, B, X, Y, Z)
    if outcome == EXHAUSTED:
        return UNKNOWN, NO_MOVE, B.meta[NODES]
    if outcome == INTERRUPTED:
        return STOPPED, NO_MOVE, B.meta[NODES]
    if outcome == OUT_OF_ROOM:
        return NEEDS_ROOM, NO_MOVE, B.meta[NODES]
    return outcome, move, B.meta[NODES]


@njit(nogil=True, **KERNEL)  # the GIL released while it runs
def vct_solve(tables, ws, cells, attacker, budget, vcf_nodes):
    """Whether ``attacker``, to move in ``cells``, has a VCT within ``budget`` nodes (its VCF check
    first, within ``vcf_nodes``): (status, move, nodes)."""
    B, at = board_views(ws)
    X, at = vcf_views(ws, at)
    T = table_views(tables)
    load(T, B, cells, attacker)
    return vct_loaded(T, B, X, ws, at, budget, vcf_nodes)


@njit(**KERNEL)
def vcf_loaded(T, B, X, budget):
    """The VCF solve of the position loaded in ``B``: (status, move, nodes)."""
    B.meta[NODES] = 0
    B.meta[BUDGET] = budget
    new_stamp(B)
    move = vcf(T, B, X)
    if move == EXHAUSTED:
        return UNKNOWN, NO_MOVE, B.meta[NODES]
    if move == INTERRUPTED:
        return STOPPED, NO_MOVE, B.meta[NODES]
    return (NO_WIN if move == NO_MOVE else WIN), move, B.meta[NODES]


@njit(nogil=True, **KERNEL)  # the GIL released while it runs
def vcf_solve(tables, ws, cells, attacker, budget):
    """Whether ``attacker``, to move in ``cells``, has a VCF within ``budget`` nodes: (status,
    move, nodes)."""
    B, at = board_views(ws)
    X, _ = vcf_views(ws, at)
    T = table_views(tables)
    load(T, B, cells, attacker)
    return vcf_loaded(T, B, X, budget)


@njit(nogil=True, **KERNEL)  # the GIL released while it runs
def vcf_defences(tables, ws, cells, defender, moves, stops, budget):
    """For ``defender`` to move in ``cells``: which of ``moves`` leave the opponent without a VCF
    within ``budget`` nodes, into ``stops`` (out of budget counts as a defence); the status that
    ended it early (STOPPED), else WIN."""
    B, at = board_views(ws)
    X, _ = vcf_views(ws, at)
    T = table_views(tables)
    load(T, B, cells, 3 - defender)
    for i in range(moves.shape[0]):
        place(T, B, moves[i], defender)
        status, _, _ = vcf_loaded(T, B, X, budget)
        remove(T, B, moves[i], defender)
        if status == STOPPED:
            return status
        stops[i] = status != WIN
    return WIN


@njit(nogil=True, **KERNEL)  # the GIL released while it runs
def vct_defences(tables, ws, cells, defender, moves, stops, budget, vcf_nodes):
    """``vcf_defences`` for VCTs; NEEDS_ROOM too."""
    B, at = board_views(ws)
    X, at = vcf_views(ws, at)
    T = table_views(tables)
    load(T, B, cells, 3 - defender)
    for i in range(moves.shape[0]):
        place(T, B, moves[i], defender)
        status, _, _ = vct_loaded(T, B, X, ws, at, budget, vcf_nodes)  # leaves the position as it was
        remove(T, B, moves[i], defender)
        if status == STOPPED or status == NEEDS_ROOM:
            return status
        stops[i] = status != WIN
    return WIN


@njit(nogil=True, **KERNEL)  # the GIL released while it runs
def solve_repeatedly(tables, ws, cells, attacker, budget, vcf_nodes, repeats, loaded):
    """The VCT (``vcf_nodes`` >= 0) or VCF (``vcf_nodes`` < 0) solve of one position, ``repeats``
    times in one call: what a solve costs inside the kernels, without a call from Python each (the
    bench times it). ``loaded``: the position is loaded once and only the solves are repeated, as
    ``kernel_rules`` solves an inner node on the position it loaded for its fours check; else each
    solve loads it, as ``vct_defences`` does. The last answer."""
    B, at = board_views(ws)
    X, at = vcf_views(ws, at)
    T = table_views(tables)
    status, move, nodes = NO_WIN, NO_MOVE, 0
    if loaded:
        load(T, B, cells, attacker)
    for _ in range(repeats):
        if not loaded:
            load(T, B, cells, attacker)
        if vcf_nodes < 0:
            status, move, nodes = vcf_loaded(T, B, X, budget)
        else:
            status, move, nodes = vct_loaded(T, B, X, ws, at, budget, vcf_nodes)
    return status, move, nodes
