""" Contains all the data models used in inputs/outputs """

from .backpressure_level import BackpressureLevel
from .dag_edge_view import DagEdgeView
from .dag_spec import DagSpec
from .dag_vertex_view import DagVertexView
from .dag_view import DagView
from .delivery_page import DeliveryPage
from .delivery_view import DeliveryView
from .delivery_view_source import DeliveryViewSource
from .delivery_view_state import DeliveryViewState
from .diagnostic import Diagnostic
from .edge_config import EdgeConfig
from .edge_spec import EdgeSpec
from .epoch_timing import EpochTiming
from .exception_link import ExceptionLink
from .export_request import ExportRequest
from .health import Health
from .health_checks import HealthChecks
from .holder import Holder
from .idle_input import IdleInput
from .job_config import JobConfig
from .job_error import JobError
from .job_metrics import JobMetrics
from .job_metrics_vertices import JobMetricsVertices
from .job_page import JobPage
from .job_spec import JobSpec
from .job_status import JobStatus
from .job_view import JobView
from .job_view_last_snapshot_type_0 import JobViewLastSnapshotType0
from .job_view_plan_type_0 import JobViewPlanType0
from .job_view_vertex_counts_type_0 import JobViewVertexCountsType0
from .jobs_dag_format_type_0 import JobsDagFormatType0
from .log_page import LogPage
from .log_page_lines_item import LogPageLinesItem
from .partition_storage_view import PartitionStorageView
from .partition_view import PartitionView
from .partitions_get_key_type import PartitionsGetKeyType
from .problem_detail import ProblemDetail
from .problem_detail_errors_type_0_item import ProblemDetailErrorsType0Item
from .processing_guarantee import ProcessingGuarantee
from .processor_metrics import ProcessorMetrics
from .processor_metrics_emitted_by_ordinal import ProcessorMetricsEmittedByOrdinal
from .processor_metrics_received_by_ordinal import ProcessorMetricsReceivedByOrdinal
from .processor_watermark import ProcessorWatermark
from .progress import Progress
from .result_page import ResultPage
from .result_page_items_item import ResultPageItemsItem
from .routing import Routing
from .sdk_source import SdkSource
from .snapshot_attempt import SnapshotAttempt
from .snapshot_attempt_state import SnapshotAttemptState
from .snapshot_attempt_vertices import SnapshotAttemptVertices
from .snapshot_list import SnapshotList
from .snapshot_view import SnapshotView
from .snapshot_view_vertices import SnapshotViewVertices
from .spark_job_timing import SparkJobTiming
from .store_node_view import StoreNodeView
from .timings import Timings
from .under_replication import UnderReplication
from .under_replication_short import UnderReplicationShort
from .validation_report import ValidationReport
from .validation_report_plan import ValidationReportPlan
from .vertex_metrics import VertexMetrics
from .vertex_metrics_emitted_by_ordinal import VertexMetricsEmittedByOrdinal
from .vertex_metrics_received_by_ordinal import VertexMetricsReceivedByOrdinal
from .vertex_spec import VertexSpec
from .vertex_spec_params import VertexSpecParams
from .vertex_state import VertexState
from .vertex_watermark import VertexWatermark
from .watermark_report import WatermarkReport

__all__ = (
    "BackpressureLevel",
    "DagEdgeView",
    "DagSpec",
    "DagVertexView",
    "DagView",
    "DeliveryPage",
    "DeliveryView",
    "DeliveryViewSource",
    "DeliveryViewState",
    "Diagnostic",
    "EdgeConfig",
    "EdgeSpec",
    "EpochTiming",
    "ExceptionLink",
    "ExportRequest",
    "Health",
    "HealthChecks",
    "Holder",
    "IdleInput",
    "JobConfig",
    "JobError",
    "JobMetrics",
    "JobMetricsVertices",
    "JobPage",
    "JobsDagFormatType0",
    "JobSpec",
    "JobStatus",
    "JobView",
    "JobViewLastSnapshotType0",
    "JobViewPlanType0",
    "JobViewVertexCountsType0",
    "LogPage",
    "LogPageLinesItem",
    "PartitionsGetKeyType",
    "PartitionStorageView",
    "PartitionView",
    "ProblemDetail",
    "ProblemDetailErrorsType0Item",
    "ProcessingGuarantee",
    "ProcessorMetrics",
    "ProcessorMetricsEmittedByOrdinal",
    "ProcessorMetricsReceivedByOrdinal",
    "ProcessorWatermark",
    "Progress",
    "ResultPage",
    "ResultPageItemsItem",
    "Routing",
    "SdkSource",
    "SnapshotAttempt",
    "SnapshotAttemptState",
    "SnapshotAttemptVertices",
    "SnapshotList",
    "SnapshotView",
    "SnapshotViewVertices",
    "SparkJobTiming",
    "StoreNodeView",
    "Timings",
    "UnderReplication",
    "UnderReplicationShort",
    "ValidationReport",
    "ValidationReportPlan",
    "VertexMetrics",
    "VertexMetricsEmittedByOrdinal",
    "VertexMetricsReceivedByOrdinal",
    "VertexSpec",
    "VertexSpecParams",
    "VertexState",
    "VertexWatermark",
    "WatermarkReport",
)
