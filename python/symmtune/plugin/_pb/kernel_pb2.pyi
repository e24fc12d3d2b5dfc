from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BenchRequest(_message.Message):
    __slots__ = ["config", "iters", "timing", "warmup"]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    ITERS_FIELD_NUMBER: _ClassVar[int]
    TIMING_FIELD_NUMBER: _ClassVar[int]
    WARMUP_FIELD_NUMBER: _ClassVar[int]
    config: Config
    iters: int
    timing: str
    warmup: int
    def __init__(self, config: _Optional[_Union[Config, _Mapping]] = ..., warmup: _Optional[int] = ..., iters: _Optional[int] = ..., timing: _Optional[str] = ...) -> None: ...

class BenchResponse(_message.Message):
    __slots__ = ["times_us"]
    TIMES_US_FIELD_NUMBER: _ClassVar[int]
    times_us: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, times_us: _Optional[_Iterable[float]] = ...) -> None: ...

class Config(_message.Message):
    __slots__ = ["values"]
    class ValuesEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: Value
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[Value, _Mapping]] = ...) -> None: ...
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.MessageMap[str, Value]
    def __init__(self, values: _Optional[_Mapping[str, Value]] = ...) -> None: ...

class ConnectRequest(_message.Message):
    __slots__ = ["blobs"]
    BLOBS_FIELD_NUMBER: _ClassVar[int]
    blobs: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, blobs: _Optional[_Iterable[bytes]] = ...) -> None: ...

class ConnectResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class DefaultRequest(_message.Message):
    __slots__ = ["backend", "problem", "world"]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    PROBLEM_FIELD_NUMBER: _ClassVar[int]
    WORLD_FIELD_NUMBER: _ClassVar[int]
    backend: str
    problem: Problem
    world: int
    def __init__(self, problem: _Optional[_Union[Problem, _Mapping]] = ..., world: _Optional[int] = ..., backend: _Optional[str] = ...) -> None: ...

class DefaultResponse(_message.Message):
    __slots__ = ["config"]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    config: Config
    def __init__(self, config: _Optional[_Union[Config, _Mapping]] = ...) -> None: ...

class DescribeRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class Description(_message.Message):
    __slots__ = ["backends", "default_config", "dims", "dtypes", "kernel_version", "name", "params", "summary"]
    BACKENDS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_CONFIG_FIELD_NUMBER: _ClassVar[int]
    DIMS_FIELD_NUMBER: _ClassVar[int]
    DTYPES_FIELD_NUMBER: _ClassVar[int]
    KERNEL_VERSION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    backends: _containers.RepeatedScalarFieldContainer[str]
    default_config: Config
    dims: _containers.RepeatedScalarFieldContainer[str]
    dtypes: _containers.RepeatedScalarFieldContainer[str]
    kernel_version: str
    name: str
    params: _containers.RepeatedCompositeFieldContainer[Param]
    summary: str
    def __init__(self, name: _Optional[str] = ..., kernel_version: _Optional[str] = ..., dims: _Optional[_Iterable[str]] = ..., dtypes: _Optional[_Iterable[str]] = ..., params: _Optional[_Iterable[_Union[Param, _Mapping]]] = ..., default_config: _Optional[_Union[Config, _Mapping]] = ..., backends: _Optional[_Iterable[str]] = ..., summary: _Optional[str] = ...) -> None: ...

class HardwareInfo(_message.Message):
    __slots__ = ["compute", "cores", "count", "driver", "interconnect", "kind", "memory_mib", "name", "sms"]
    COMPUTE_FIELD_NUMBER: _ClassVar[int]
    CORES_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    DRIVER_FIELD_NUMBER: _ClassVar[int]
    INTERCONNECT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MEMORY_MIB_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SMS_FIELD_NUMBER: _ClassVar[int]
    compute: str
    cores: int
    count: int
    driver: str
    interconnect: str
    kind: str
    memory_mib: int
    name: str
    sms: int
    def __init__(self, kind: _Optional[str] = ..., name: _Optional[str] = ..., count: _Optional[int] = ..., cores: _Optional[int] = ..., sms: _Optional[int] = ..., memory_mib: _Optional[int] = ..., compute: _Optional[str] = ..., driver: _Optional[str] = ..., interconnect: _Optional[str] = ...) -> None: ...

class HardwareRequest(_message.Message):
    __slots__ = ["backend", "world"]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    WORLD_FIELD_NUMBER: _ClassVar[int]
    backend: str
    world: int
    def __init__(self, backend: _Optional[str] = ..., world: _Optional[int] = ...) -> None: ...

class Param(_message.Message):
    __slots__ = ["name", "values"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    name: str
    values: _containers.RepeatedCompositeFieldContainer[Value]
    def __init__(self, name: _Optional[str] = ..., values: _Optional[_Iterable[_Union[Value, _Mapping]]] = ...) -> None: ...

class PrecompileRequest(_message.Message):
    __slots__ = ["configs"]
    CONFIGS_FIELD_NUMBER: _ClassVar[int]
    configs: _containers.RepeatedCompositeFieldContainer[Config]
    def __init__(self, configs: _Optional[_Iterable[_Union[Config, _Mapping]]] = ...) -> None: ...

class PrecompileResponse(_message.Message):
    __slots__ = ["errors"]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    errors: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, errors: _Optional[_Iterable[str]] = ...) -> None: ...

class PrepareRequest(_message.Message):
    __slots__ = ["config"]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    config: Config
    def __init__(self, config: _Optional[_Union[Config, _Mapping]] = ...) -> None: ...

class PrepareResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class Problem(_message.Message):
    __slots__ = ["dtype", "shape"]
    class ShapeEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    dtype: str
    shape: _containers.ScalarMap[str, int]
    def __init__(self, shape: _Optional[_Mapping[str, int]] = ..., dtype: _Optional[str] = ...) -> None: ...

class SetupRequest(_message.Message):
    __slots__ = ["backend", "group_id", "problem", "rank", "world"]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    PROBLEM_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    WORLD_FIELD_NUMBER: _ClassVar[int]
    backend: str
    group_id: str
    problem: Problem
    rank: int
    world: int
    def __init__(self, backend: _Optional[str] = ..., rank: _Optional[int] = ..., world: _Optional[int] = ..., problem: _Optional[_Union[Problem, _Mapping]] = ..., group_id: _Optional[str] = ...) -> None: ...

class SetupResponse(_message.Message):
    __slots__ = ["blob"]
    BLOB_FIELD_NUMBER: _ClassVar[int]
    blob: bytes
    def __init__(self, blob: _Optional[bytes] = ...) -> None: ...

class TeardownRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class TeardownResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ValidateBatchRequest(_message.Message):
    __slots__ = ["backend", "configs", "problem", "world"]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    CONFIGS_FIELD_NUMBER: _ClassVar[int]
    PROBLEM_FIELD_NUMBER: _ClassVar[int]
    WORLD_FIELD_NUMBER: _ClassVar[int]
    backend: str
    configs: _containers.RepeatedCompositeFieldContainer[Config]
    problem: Problem
    world: int
    def __init__(self, configs: _Optional[_Iterable[_Union[Config, _Mapping]]] = ..., problem: _Optional[_Union[Problem, _Mapping]] = ..., world: _Optional[int] = ..., backend: _Optional[str] = ...) -> None: ...

class ValidateBatchResponse(_message.Message):
    __slots__ = ["results"]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[ValidateResponse]
    def __init__(self, results: _Optional[_Iterable[_Union[ValidateResponse, _Mapping]]] = ...) -> None: ...

class ValidateRequest(_message.Message):
    __slots__ = ["backend", "config", "problem", "world"]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    PROBLEM_FIELD_NUMBER: _ClassVar[int]
    WORLD_FIELD_NUMBER: _ClassVar[int]
    backend: str
    config: Config
    problem: Problem
    world: int
    def __init__(self, config: _Optional[_Union[Config, _Mapping]] = ..., problem: _Optional[_Union[Problem, _Mapping]] = ..., world: _Optional[int] = ..., backend: _Optional[str] = ...) -> None: ...

class ValidateResponse(_message.Message):
    __slots__ = ["ok", "reason"]
    OK_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ok: bool
    reason: str
    def __init__(self, ok: bool = ..., reason: _Optional[str] = ...) -> None: ...

class Value(_message.Message):
    __slots__ = ["int", "str"]
    INT_FIELD_NUMBER: _ClassVar[int]
    STR_FIELD_NUMBER: _ClassVar[int]
    int: int
    str: str
    def __init__(self, int: _Optional[int] = ..., str: _Optional[str] = ...) -> None: ...

class VerifyRequest(_message.Message):
    __slots__ = ["config", "seed"]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    config: Config
    seed: int
    def __init__(self, config: _Optional[_Union[Config, _Mapping]] = ..., seed: _Optional[int] = ...) -> None: ...

class VerifyResponse(_message.Message):
    __slots__ = ["detail", "ok", "rel_err"]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    REL_ERR_FIELD_NUMBER: _ClassVar[int]
    detail: str
    ok: bool
    rel_err: float
    def __init__(self, ok: bool = ..., rel_err: _Optional[float] = ..., detail: _Optional[str] = ...) -> None: ...
