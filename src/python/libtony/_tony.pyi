# Type stubs of libtony._tony (src/python/*_bindings.cc). tests/python/test_api.py checks
# that every public name of the module has an entry here.
import datetime
import enum
from typing import (Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple,
                    Union)

Duration = Union[datetime.timedelta, float, None]  # None or float("inf"): no limit

__version__: str

class AppState(enum.Enum):
    SUBMITTED = ...
    ACCEPTED = ...
    RUNNING = ...
    SUCCEEDED = ...
    FAILED = ...
    KILLED = ...
    SUSPENDED = ...
    @property
    def final(self) -> bool: ...

class JobTypeProgress:
    total: int
    allocated: int
    registered: int
    running: int
    succeeded: int
    failed: int
    restarts: int

class ApplicationStatus:
    id: str
    state: AppState
    tracking_url: str
    diagnostics: str
    progress: Dict[str, JobTypeProgress]
    log_dir: str
    tensorboard_url: str
    pending: str
    wait_reason: str
    wait_kind: str
    attempt: int
    max_attempts: int
    @property
    def suspended_since(self) -> Optional[float]:
        """SUSPENDED: since when, in seconds since the epoch; None otherwise."""
    @property
    def final(self) -> bool: ...
    def _repr_html_(self) -> str: ...

class ApplicationSummary:
    id: str
    state: AppState
    user: str
    queue: str
    name: str
    type: str
    tags: StringList

class Framework(enum.Enum):
    TENSORFLOW = ...
    PYTORCH = ...
    HOROVOD = ...
    CUSTOM = ...
    JAX = ...
    MPI = ...
    def __init__(self, text: str) -> None: ...
    @property
    def text(self) -> str: ...

class RestartPolicy(enum.Enum):
    NEVER = ...
    ON_FAILURE = ...
    EXIT_CODE = ...
    def __init__(self, text: str) -> None: ...
    @property
    def text(self) -> str: ...

class RestartScope(enum.Enum):
    TASK = ...
    JOB = ...
    def __init__(self, text: str) -> None: ...
    @property
    def text(self) -> str: ...

class AddressChange(enum.Enum):
    FAIL = ...
    RESTART_JOB = ...
    ACCEPT = ...
    def __init__(self, text: str) -> None: ...
    @property
    def text(self) -> str: ...

class DependencyCondition(enum.Enum):
    REGISTERED = ...
    RUNNING = ...
    FINISHED = ...
    def __init__(self, text: str) -> None: ...
    @property
    def text(self) -> str: ...

class ElasticRange:
    min: int
    max: int
    def __init__(self, *, min: int = ..., max: int = ...) -> None: ...

class RoleDependency:
    role: str
    when: DependencyCondition
    timeout: datetime.timedelta
    def __init__(self, *, role: str = ..., when: Union[DependencyCondition, str] = ...,
                 timeout: datetime.timedelta = ...) -> None: ...

class YamlDetail(enum.Enum):
    SPEC = ...
    ROLE_SUMMARY = ...
    EVERY_TASK = ...

class StringMap(Dict[str, str]):  # bound by reference: edits change the spec
    def __init__(self, values: Mapping[str, str] = ...) -> None: ...

class StringList(List[str]):
    def __init__(self, values: Iterable[str] = ...) -> None: ...

class ResourcesByTask(Dict[int, "Resources"]):
    def __init__(self, values: Mapping[int, "Resources"] = ...) -> None: ...

class JobTypeList(List["JobTypeSpec"]):
    def __init__(self, values: Union[Iterable["JobTypeSpec"], Mapping[str, Union[int, dict]]] = ...) -> None: ...

class Resources:
    vcores: Optional[int]
    memory_mb: Optional[int]
    gpus: Optional[int]
    def __init__(self, *, vcores: Optional[int] = ..., memory_mb: Optional[int] = ...,
                 gpus: Optional[int] = ...) -> None: ...

class RestartSpec:
    policy: RestartPolicy
    max_restarts: int
    backoff: datetime.timedelta
    scope: RestartScope
    on_address_change: AddressChange
    def __init__(self, *, policy: Union[RestartPolicy, str] = ..., max_restarts: int = ...,
                 backoff: Duration = ..., scope: Union[RestartScope, str] = ...,
                 on_address_change: Union[AddressChange, str] = ...) -> None: ...

class JobTimeouts:
    registration: Optional[datetime.timedelta]
    job: Optional[datetime.timedelta]
    stop_grace: Optional[datetime.timedelta]
    am_unreachable: Optional[datetime.timedelta]
    allocation: Optional[datetime.timedelta]
    def __init__(self, *, registration: Duration = ..., job: Duration = ...,
                 stop_grace: Duration = ..., am_unreachable: Duration = ...,
                 allocation: Duration = ...) -> None: ...

class JobTypeSpec:
    name: str
    instances: int
    resources: Resources
    task_resources: ResourcesByTask
    node_label: str
    docker_image: str
    command: str
    env: StringMap
    tracked: Optional[bool]
    restart: Optional[RestartSpec]
    # A copy when read: assign a new list to change it.
    depends_on: List[RoleDependency]
    linger: datetime.timedelta
    elastic: Optional[ElasticRange]
    anti_affinity: bool
    node_attribute: str
    def __init__(self, name: Optional[str] = None, *, instances: int = ...,
                 resources: Resources = ..., task_resources: Mapping[int, Resources] = ...,
                 node_label: str = ..., docker_image: str = ..., command: str = ...,
                 env: Mapping[str, str] = ..., tracked: Optional[bool] = ...,
                 restart: Optional[RestartSpec] = ...,
                 depends_on: Sequence[RoleDependency] = ...,
                 linger: datetime.timedelta = ...,
                 elastic: Optional[ElasticRange] = ...,
                 anti_affinity: bool = ...,
                 node_attribute: str = ...) -> None: ...

class TaskSpec:
    job_name: str
    index: int
    vcores: int
    memory_mb: int
    gpus: int
    node_label: str
    docker_image: str
    command: str
    env: StringMap
    tracked: bool
    anti_affinity: bool
    node_attribute: str
    @property
    def id(self) -> str: ...

class JobSpec:
    name: str
    queue: str
    tags: StringList
    application_type: str
    view_acls: str
    max_attempts: int
    priority: Optional[int]
    work_preserving_restart: bool
    framework: Framework
    job_types: JobTypeList
    task_defaults: Resources
    command: str
    env: StringMap
    docker_image: str
    input_path: str
    output_path: str
    script_file: str
    files: StringList
    archives: StringList
    tensorboard: bool
    tensorboard_command: str
    python_env: str
    site_template: str
    client_mode: bool
    am_vcores: int
    am_memory_mb: int
    am_node_label: str
    timeouts: JobTimeouts
    def __init__(self, **fields: object) -> None:
        """Every field by name; job_types also as {"ps": 1, "worker": {"instances": 2}}.
        Given job_types, the spec is validated at once (ValueError naming the field)."""
    @staticmethod
    def from_yaml(yaml: str, source_name: str = "<string>") -> "JobSpec": ...
    @staticmethod
    def load(path: str) -> "JobSpec": ...
    def to_yaml(self, detail: YamlDetail = ...) -> str: ...
    def validate(self) -> None: ...
    def warnings(self) -> List[str]: ...
    def tasks(self) -> List[TaskSpec]: ...
    def total_tasks(self) -> int: ...

class Application:
    @property
    def id(self) -> str: ...
    def status(self, timeout: Duration = None) -> ApplicationStatus: ...
    def wait(self, timeout: Duration = None,
             on_progress: Optional[Callable[[ApplicationStatus], None]] = None
             ) -> ApplicationStatus: ...
    def kill(self, timeout: Duration = None) -> None: ...
    def scale(self, role: str, tasks: int, timeout: Duration = None) -> None:
        """Asks for the elastic role `role` to have `tasks` tasks from now on:
        InvalidArgumentError (a ValueError) outside its range, FailedPreconditionError for a
        role that is not elastic or a job that is over."""
    def suspend(self, timeout: Duration = None) -> None:
        """Stops every task that has not finished and releases its container; the job stays
        (status SUSPENDED once all stopped) until resume(). FailedPreconditionError for a job
        that is over, not running yet, finishing, or in client mode."""
    def resume(self, timeout: Duration = None) -> None:
        """Asks for the suspended tasks again; they start afresh (from their checkpoints)."""
    def logs(self, task: str, file: str = "stderr", timeout: Duration = None) -> str: ...

class TaskLog:
    contents: str
    # "on <NodeManager host:port>", "from the aggregated logs in hdfs://..." or "in <path>".
    source: str

class Submitter:
    @staticmethod
    def yarn(conf_dir: Optional[str] = None, conf_overrides: Mapping[str, str] = ...,
             user: Optional[str] = None, principal: Optional[str] = None,
             keytab: Optional[str] = None, broker_tls: bool = False,
             bin_dir: Optional[str] = None) -> "Submitter": ...
    @staticmethod
    def local(work_root: Optional[str] = None, pass_environment: Iterable[str] = ...,
              bin_dir: Optional[str] = None) -> "Submitter": ...
    def submit(self, spec: JobSpec) -> Application: ...
    def open(self, id: str, timeout: Duration = None) -> Application: ...
    def list(self, include_finished: bool = False, tags: Iterable[str] = ...,
             timeout: Duration = None, *, all_users: bool = False) -> List[ApplicationSummary]: ...
    @property
    def user(self) -> str: ...
    def read_log(self, id: str, task: str, file: str = "stderr",
                 timeout: Duration = None) -> str:
        """The whole file; on YARN the NodeManager's copy, else YARN's aggregated logs."""
    def read_task_log(self, id: str, task: str, file: str = "stderr",
                      timeout: Duration = None) -> "TaskLog":
        """read_log's text and where it was read (TaskLog.source)."""
    def run(self, fn: Callable[..., object], *args: object, job_types: object = None,
            framework: Optional[str] = None, python: str = "python3",
            kwargs: Optional[Mapping[str, object]] = None, timeout: Duration = None,
            progress: Union[bool, Callable[[ApplicationStatus], None], None] = True,
            **spec_fields: object) -> Dict[str, object]:
        """libtony.run(fn, *args, submitter=self, ...) (libtony/__init__.py adds it)."""

def reattach_tag(key: str, secret: str, prefix: str = "") -> str: ...

class ApplicationEvent:
    id: str
    status: Optional[ApplicationStatus]
    error: Optional[BaseException]
    last: bool

class ApplicationMonitor:
    def __init__(self, max_poll_interval: Duration = ..., long_poll: Duration = ...,
                 max_failures: int = 5) -> None: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def follow(self, app: Application, timeout: Duration = None) -> None: ...
    def unfollow(self, id: str) -> None: ...
    def __len__(self) -> int: ...
    def fileno(self) -> int: ...
    def take_events(self) -> List[ApplicationEvent]: ...

def _log_queue_start(min_severity: int) -> None: ...
def _log_queue_stop() -> None: ...
def _log_queue_next(timeout: float) -> Optional[List[Tuple[int, str, int, str]]]: ...
def _log_queue_dropped() -> int: ...
def _min_log_severity() -> int: ...
