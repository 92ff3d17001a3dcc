"""The seeds' partition table: partitions owned by members, each with a primary and backups.

Keys map to partitions (271 by default, SPEC §4's formula); every partition has one primary
replica and ``backup_count`` backups, each on a different member. When the cluster changes,
as little as possible moves:

- a member that **joins** takes the minimum share from each existing member: in member
  order, each hands over one primary then one backup (its lowest partition the newcomer holds
  no replica of yet) while it has more than its share, until the newcomer has its own;
- a member that is **lost** costs nothing: the first backup of each partition it led is
  promoted to primary, then every partition short of backups gets a new one on the member
  holding fewest backups; last, primaries are evened out by swapping the roles of a primary
  and a backup that already holds the data.

The table is a value; ``join`` and ``lose`` return the new table and the moves they made, so
snapshot state can follow the moves (restored from replicas that were already there).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import StrEnum

Member = str


class MoveKind(StrEnum):
    migrate_primary = "migrate_primary"
    """The primary replica moves from ``source`` to ``target``."""
    migrate_backup = "migrate_backup"
    """A backup replica moves from ``source`` to ``target``."""
    promote = "promote"
    """``target``'s backup becomes the primary (its old primary, ``source``, is gone)."""
    new_backup = "new_backup"
    """A new backup is copied to ``target`` from the primary, ``source``."""
    swap = "swap"
    """Primary and a backup trade roles: ``target`` leads, ``source`` backs up (no copy)."""


@dataclass(frozen=True)
class Move:
    kind: MoveKind
    partition: int
    source: Member | None
    target: Member


@dataclass(frozen=True)
class Replicas:
    primary: Member
    backups: tuple[Member, ...] = ()

    @property
    def holders(self) -> tuple[Member, ...]:
        return (self.primary, *self.backups)


class PartitionTableError(ValueError):
    """A request the table cannot satisfy (unknown member, too few members, ...)."""


@dataclass(frozen=True)
class PartitionTable:
    """Who holds which replica of every partition (index = partition id)."""

    members: tuple[Member, ...]
    replicas: tuple[Replicas, ...]
    backup_count: int = 1

    def __post_init__(self) -> None:
        for pid, rep in enumerate(self.replicas):
            if len(set(rep.holders)) != len(rep.holders):
                raise PartitionTableError(f"partition {pid}: two replicas on one member")
            unknown = set(rep.holders) - set(self.members)
            if unknown:
                raise PartitionTableError(f"partition {pid}: unknown member(s) {sorted(unknown)}")

    # -- building -------------------------------------------------------------------------
    @classmethod
    def balanced(
        cls, members: list[Member], partition_count: int = 271, backup_count: int = 1
    ) -> PartitionTable:
        """Primaries round-robin; the k-th backup of a partition on the k-th next member."""
        if backup_count >= len(members):
            raise PartitionTableError(
                f"{backup_count} backup(s) need at least {backup_count + 1} members"
            )
        n = len(members)
        replicas = tuple(
            Replicas(
                members[p % n], tuple(members[(p + k) % n] for k in range(1, backup_count + 1))
            )
            for p in range(partition_count)
        )
        return cls(tuple(members), replicas, backup_count)

    # -- reading ---------------------------------------------------------------------------
    @property
    def partition_count(self) -> int:
        return len(self.replicas)

    def primaries_of(self, member: Member) -> list[int]:
        return [p for p, rep in enumerate(self.replicas) if rep.primary == member]

    def backups_of(self, member: Member) -> list[int]:
        return [p for p, rep in enumerate(self.replicas) if member in rep.backups]

    def owner(self, partition: int) -> Member:
        return self.replicas[partition].primary

    # -- changes ---------------------------------------------------------------------------
    def join(self, newcomer: Member) -> tuple[PartitionTable, list[Move]]:
        """Add a member; each existing member hands it a primary, then a backup, in turns,
        until it holds its minimum share of both."""
        if newcomer in self.members:
            raise PartitionTableError(f"member {newcomer!r} is already in the table")
        members = (*self.members, newcomer)
        replicas = list(self.replicas)
        targets = {
            True: self.partition_count // len(members),
            False: self.partition_count * self.backup_count // len(members),
        }
        moves: list[Move] = []
        progress = True
        while progress:
            progress = False
            for donor in self.members:
                for primary in (True, False):
                    if _count(replicas, newcomer, primary=primary) >= targets[primary]:
                        continue
                    if _count(replicas, donor, primary=primary) <= targets[primary]:
                        continue  # the donor keeps its own share
                    move = _take(replicas, donor, newcomer, primary=primary)
                    if move is not None:
                        moves.append(move)
                        progress = True
        return PartitionTable(members, tuple(replicas), self.backup_count), moves

    def lose(self, lost: Member) -> tuple[PartitionTable, list[Move]]:
        """Remove a member: promote its partitions' backups, then replace lost backups."""
        if lost not in self.members:
            raise PartitionTableError(f"member {lost!r} is not in the table")
        members = tuple(m for m in self.members if m != lost)
        backup_count = min(self.backup_count, len(members) - 1)
        replicas: list[Replicas] = []
        moves: list[Move] = []
        for pid, rep in enumerate(self.replicas):
            backups = tuple(b for b in rep.backups if b != lost)
            if rep.primary == lost:
                if not backups:
                    raise PartitionTableError(f"partition {pid} had no backup: its data is lost")
                moves.append(Move(MoveKind.promote, pid, lost, backups[0]))
                rep = Replicas(backups[0], backups[1:])
            else:
                rep = Replicas(rep.primary, backups)
            replicas.append(rep)
        load = Counter(b for rep in replicas for b in rep.backups)
        for pid, rep in enumerate(replicas):
            while len(rep.backups) < backup_count:
                candidates = [m for m in members if m not in rep.holders]
                chosen = min(candidates, key=lambda m: (load[m], members.index(m)))
                load[chosen] += 1
                moves.append(Move(MoveKind.new_backup, pid, rep.primary, chosen))
                rep = Replicas(rep.primary, (*rep.backups, chosen))
            replicas[pid] = rep
        moves += _even_out_primaries(replicas, members)
        return PartitionTable(members, tuple(replicas), backup_count), moves


def _held(replicas: list[Replicas], member: Member, *, primary: bool) -> list[int]:
    return [
        p
        for p, rep in enumerate(replicas)
        if (rep.primary == member if primary else member in rep.backups)
    ]


def _count(replicas: list[Replicas], member: Member, *, primary: bool) -> int:
    return len(_held(replicas, member, primary=primary))


def _take(
    replicas: list[Replicas], donor: Member, newcomer: Member, *, primary: bool
) -> Move | None:
    """Move the donor's lowest replica of a partition ``newcomer`` holds nothing of yet."""
    for pid in _held(replicas, donor, primary=primary):
        rep = replicas[pid]
        if newcomer in rep.holders:
            continue
        if primary:
            replicas[pid] = Replicas(newcomer, rep.backups)
            return Move(MoveKind.migrate_primary, pid, donor, newcomer)
        backups = tuple(newcomer if b == donor else b for b in rep.backups)
        replicas[pid] = Replicas(rep.primary, backups)
        return Move(MoveKind.migrate_backup, pid, donor, newcomer)
    return None


def _even_out_primaries(replicas: list[Replicas], members: tuple[Member, ...]) -> list[Move]:
    """Swap primary and backup roles until primary counts differ by at most one."""
    moves: list[Move] = []
    while True:
        load = Counter({m: 0 for m in members})
        load.update(rep.primary for rep in replicas)
        heavy = max(members, key=lambda m: (load[m], -members.index(m)))
        swap = next(
            (
                (pid, backup)
                for pid in _held(replicas, heavy, primary=True)
                for backup in replicas[pid].backups
                if load[backup] < load[heavy] - 1
            ),
            None,
        )
        if swap is None:
            return moves
        pid, backup = swap
        rep = replicas[pid]
        others = tuple(heavy if b == backup else b for b in rep.backups)
        replicas[pid] = Replicas(backup, others)
        moves.append(Move(MoveKind.swap, pid, heavy, backup))
