"""The seeds' partitioned, replicated storage: 3 members and 12 partitions, a 4th joins, the
1st is lost (figures 1-4 of the in-memory storage document; partitions numbered from 1)."""

from __future__ import annotations

from collections import Counter

import pytest

from jetspark.storage.partition_table import (
    Move,
    MoveKind,
    PartitionTable,
    PartitionTableError,
    Replicas,
)

M1, M2, M3, M4 = "member-1", "member-2", "member-3", "member-4"
PRIMARIES = {M1: [1, 4, 7, 10], M2: [2, 5, 8, 11], M3: [3, 6, 9, 12]}
BACKUPS = {M1: [2, 3, 5, 6], M2: [1, 4, 9, 12], M3: [7, 8, 10, 11]}
"""Figure 1. The text names member 1's replicas and, through figure 4, who backs up member
1's primaries; the rest follows from one backup per partition on another member."""


def figure_1() -> PartitionTable:
    owner = {p: m for m, ps in PRIMARIES.items() for p in ps}
    backup = {p: m for m, ps in BACKUPS.items() for p in ps}
    return PartitionTable(
        members=(M1, M2, M3),
        replicas=tuple(Replicas(owner[p], (backup[p],)) for p in range(1, 13)),
        backup_count=1,
    )


def numbered(partitions: list[int]) -> list[int]:
    return sorted(p + 1 for p in partitions)


def assert_sound(table: PartitionTable) -> None:
    """Every partition: one primary and the configured backups, all on distinct members."""
    for rep in table.replicas:
        assert len(rep.backups) == table.backup_count
        assert len(set(rep.holders)) == len(rep.holders)


def test_figure_1_member_1_keeps_primaries_1_4_7_10_and_backups_2_3_5_6() -> None:
    table = figure_1()
    assert numbered(table.primaries_of(M1)) == [1, 4, 7, 10]
    assert numbered(table.backups_of(M1)) == [2, 3, 5, 6]
    assert_sound(table)


def test_figure_3_a_fourth_member_takes_one_primary_and_one_backup_from_each() -> None:
    before = figure_1()
    after, moves = before.join(M4)
    assert_sound(after)
    given = Counter((m.source, m.kind) for m in moves)
    for member in (M1, M2, M3):
        assert given[(member, MoveKind.migrate_primary)] == 1
        assert given[(member, MoveKind.migrate_backup)] == 1
    assert len(moves) == 6, "no more data moves than the newcomer's share"
    from_first = {(m.kind, m.partition + 1) for m in moves if m.source == M1}
    assert from_first == {(MoveKind.migrate_primary, 1), (MoveKind.migrate_backup, 2)}
    for member in after.members:
        assert len(after.primaries_of(member)) == 3
        assert len(after.backups_of(member)) == 3
    unmoved = {m.partition for m in moves}
    for pid in set(range(12)) - unmoved:
        assert after.replicas[pid] == before.replicas[pid]


def test_figure_4_losing_member_1_promotes_its_backups_and_makes_new_ones() -> None:
    after, moves = figure_1().lose(M1)
    assert_sound(after)
    promoted = {(m.partition + 1, m.target) for m in moves if m.kind is MoveKind.promote}
    assert promoted == {(1, M2), (4, M2), (7, M3), (10, M3)}
    new_backups = [m for m in moves if m.kind is MoveKind.new_backup]
    # The promoted partitions and the ones member 1 backed up (2, 3, 5, 6) need new backups,
    # which members 2 and 3 create for each other.
    assert sorted(m.partition + 1 for m in new_backups) == [1, 2, 3, 4, 5, 6, 7, 10]
    assert all({m.source, m.target} == {M2, M3} for m in new_backups)
    assert len(after.backups_of(M2)) == len(after.backups_of(M3)) == 6
    assert M1 not in {h for rep in after.replicas for h in rep.holders}


def test_a_balanced_table_of_271_partitions_survives_joins_and_losses() -> None:
    table = PartitionTable.balanced(["a", "b", "c"], partition_count=271, backup_count=1)
    for change in ("join d", "lose a", "join e", "lose c"):
        verb, member = change.split()
        table, moves = table.join(member) if verb == "join" else table.lose(member)
        assert_sound(table)
        shares = [len(table.primaries_of(m)) for m in table.members]
        assert max(shares) - min(shares) <= 2, f"after {change}: {shares}"
        assert all(isinstance(m, Move) for m in moves)


def test_impossible_changes_are_refused() -> None:
    table = PartitionTable.balanced(["a", "b"], partition_count=4, backup_count=1)
    with pytest.raises(PartitionTableError, match="already"):
        table.join("a")
    with pytest.raises(PartitionTableError, match="not in the table"):
        table.lose("z")
    with pytest.raises(PartitionTableError, match="at least 3 members"):
        PartitionTable.balanced(["a", "b"], backup_count=2)
    alone, _ = table.lose("b")
    with pytest.raises(PartitionTableError, match="no backup"):
        alone.lose("a")
