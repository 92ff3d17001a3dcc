"""Every Redis key jetspark uses, built from one namespace.

Three families, placed for a Redis Cluster (keys of one multi-key command, script or
transaction must share a hash slot):

- the control plane (job queue, leases' heartbeats, the reconciler's lock, a job's events,
  logs and metrics): ``{<ns>}:...``, one hash tag, so all of it lives on one slot and the
  job log's script, transactions and XREADGROUP see their keys together;
- snapshot state: ``<ns>:{p<partition>}:...``, a tag per partition, so partitions spread
  over the primaries as the seeds' partitioned map spreads over members;
- users' maps and streams: ``<ns>:user:<principal>:...``, placed by their whole name;
- the API's per-caller counters shared by its processes: open event streams
  ``<ns>:api:sse:<principal>``, each used alone by a script, placed by its whole name; and
  rate-limit buckets under one hash tag ``{<ns>:rate}``, checked many at a time by one
  script (one slot: on a Redis Cluster, one node serves the rate limit).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Keys:
    namespace: str = "jetspark"

    @property
    def control(self) -> str:
        """The control plane's prefix: the namespace as a hash tag (one slot)."""
        return f"{{{self.namespace}}}:"

    @property
    def jobs_stream(self) -> str:
        """Stream on which job ids are announced."""
        return f"{self.control}jobs"

    @property
    def workers_group(self) -> str:
        """Consumer group of the workers on ``jobs_stream``."""
        return "workers"

    @property
    def reconciler_lock(self) -> str:
        return f"{self.control}lock:reconciler"

    @property
    def alive_marker(self) -> str:
        """Set by the reconciler; missing means Redis lost its data (restarted empty)."""
        return f"{self.control}alive"

    def worker_heartbeat(self, worker: str) -> str:
        return f"{self.control}worker:{worker}"

    def job_events(self, job_id: object) -> str:
        """Stream of a job's live events (metric ticks, snapshot commits) for SSE clients."""
        return f"{self.control}job:{job_id}:events"

    def job_logs(self, job_id: object) -> str:
        """List of a job's last log lines (JSON), oldest first (``jetspark.joblogs``)."""
        return f"{self.control}job:{job_id}:logs"

    def job_log_count(self, job_id: object) -> str:
        """How many lines the job ever logged: the number of the next one."""
        return f"{self.control}job:{job_id}:logs:count"

    def job_metrics(self, job_id: object) -> str:
        """A job's latest metrics document (``jetspark.metrics.report.JobMetrics``, JSON)."""
        return f"{self.control}job:{job_id}:metrics"

    def job_processor_metrics(self, job_id: object, attempt: int) -> str:
        """Hash of one attempt's live processor reports: field ``<vertex>/<index>``, value
        ``ProcessorMetrics`` JSON, written from inside the Spark tasks."""
        return f"{self.control}job:{job_id}:{attempt}:processors"

    def worker_heartbeat_pattern(self) -> str:
        """SCAN pattern matching every ``worker_heartbeat`` key."""
        return f"{self.control}worker:*"

    def snapshot_partition(self, partition: int, job_id: object, snapshot_id: int) -> str:
        """Hash of one snapshot's state entries of one partition, a field per vertex.

        The partition is the key's hash tag, so a Redis Cluster places every key of a
        partition on one node, as the seeds' partitioned map places a partition's entries.
        """
        return f"{self.namespace}:{self.partition_tag(partition)}:snapshot:{job_id}:{snapshot_id}"

    @staticmethod
    def partition_tag(partition: int) -> str:
        """``{p<partition>}``: the hash tag of a partition's snapshot keys."""
        return f"{{p{partition}}}"

    def snapshot_keys(self, job_id: object, snapshot_id: int, partition_count: int) -> list[str]:
        """Every partition hash of one snapshot."""
        return [self.snapshot_partition(p, job_id, snapshot_id) for p in range(partition_count)]

    def job_keys(self, job_id: object, attempts: int) -> list[str]:
        """Every key of a job but its snapshots': its events, logs, metrics, and the
        processor reports of attempts 0..``attempts``."""
        return [
            self.job_events(job_id),
            self.job_logs(job_id),
            self.job_log_count(job_id),
            self.job_metrics(job_id),
            *(self.job_processor_metrics(job_id, a) for a in range(attempts + 1)),
        ]

    def server_prefixes(self) -> tuple[str, str]:
        """Every key jetspark's own code reads starts with one of these; users' names may
        not."""
        return self.control, f"{self.namespace}:"

    def rate_limit(self, rule: str, caller: str) -> str:
        """A caller's bucket under one rate rule (``jetspark.tenants.rate_limit``): ``rule``
        is ``<per second>/<burst>``, so processes configured alike share it; ``caller`` is
        ``p:<principal>`` or ``a:<client address>``. Every bucket shares the hash tag
        ``{<ns>:rate}``: one script call checks the buckets of many requests at once."""
        return f"{self.namespace}:api:{{{self.namespace}:rate}}:{rule}:{caller}"

    def event_streams(self, principal: str) -> str:
        """Sorted set of the event streams ``principal`` holds open in any API process, each
        scored by when its lease ends (``jetspark.tenants.quotas``)."""
        return f"{self.namespace}:api:sse:{principal}"

    def user_prefix(self, principal: str) -> str:
        """Where a principal's maps and streams live: its names cannot reach the server's own
        keys or another principal's (principal names have no ``:``)."""
        return f"{self.namespace}:user:{principal}:"

    def redis_map(self, principal: str, map_name: str) -> str:
        """Hash written by a ``sink.redis_map`` vertex of ``principal``'s job."""
        return f"{self.user_prefix(principal)}map:{map_name}"

    def user_stream(self, principal: str, stream: str) -> str:
        """The Redis stream a ``source/sink.redis_stream`` of ``principal``'s job names."""
        return f"{self.user_prefix(principal)}stream:{stream}"
