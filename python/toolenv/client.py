"""A typed client of the toolenv gRPC services (ToolEnv and Runs).

Thin on purpose: each method is one RPC, with keyword arguments for the
request's fields; the messages are the generated ones (``toolenv.pb``), and
a tool call's outcome is a :class:`CallResult`, which reads the same whether
a fault came as a gRPC status or in-band.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Optional, Sequence, Union

import grpc

from toolenv.v1 import toolenv_pb2 as pb
from toolenv.v1 import toolenv_pb2_grpc as pb_grpc

__all__ = [
    "CallResult",
    "Client",
    "pb",
    "status_error",
    "status_result",
    "fault_delivery",
    "reply_result",
    "create_request",
    "call_request",
    "finish_request",
    "answer_schema",
]

Arguments = Union[Mapping[str, Any], str, None]


def fault_delivery(delivery: Union[str, int, None]) -> int:
    """``"status"`` (the default) or ``"in_band"`` as the wire enum."""
    if delivery is None or delivery == "status":
        return pb.FAULT_DELIVERY_STATUS
    if delivery in ("in_band", "in-band"):
        return pb.FAULT_DELIVERY_IN_BAND
    if isinstance(delivery, int) and delivery in (pb.FAULT_DELIVERY_STATUS, pb.FAULT_DELIVERY_IN_BAND):
        return delivery
    raise ValueError(f"fault delivery must be 'status' or 'in_band', not {delivery!r}")


def arguments_json(arguments: Arguments) -> str:
    """Arguments as the JSON text CallTool takes: compact, keys as given (text passes unchanged)."""
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class CallResult:
    """What one CallTool came to, as an agent reads it.

    ``text`` is what a model should read: the result JSON (possibly cut short
    by a fault, or an in-band fault's error object), ``{"domain_error":
    {...}}`` for a broken business rule, or ``{"error": {...}}`` for an error
    status (the same text the MCP bridge puts in a tool error).
    """

    text: str
    #: "result", "domain_error" or "status" (an error status: a fault, a bad call, a refusal).
    kind: str
    call_index: Optional[int] = None
    #: The status code's name ("UNAVAILABLE") for kind "status"; the domain error code for "domain_error".
    code: str = ""
    #: ErrorInfo reason of a status ("RATE_LIMIT_EXCEEDED"), or an in-band fault's reason.
    reason: str = ""
    #: Real milliseconds to wait before a retry (the grpc-retry-pushback-ms trailer); -1: do not retry.
    retry_after_ms: Optional[int] = None
    #: The same advice in the episode's virtual milliseconds (ErrorInfo ``retry_after_virtual_ms``).
    retry_after_virtual_ms: Optional[int] = None
    details: Mapping[str, Any] = field(default_factory=dict)
    #: The index the episode's next call takes, as the answer says it (``call_index`` + 1, or an
    #: error status's ``toolenv-next-index`` trailer); None when the answer leaves the call's
    #: outcome unknown (the store unavailable, the connection cut): send it again with the same index.
    next_index: Optional[int] = None

    @property
    def is_error(self) -> bool:
        """True for a domain error or an error status (MCP's ``isError``)."""
        return self.kind != "result"

    def in_band_fault(self) -> Optional[Mapping[str, Any]]:
        """An in-band fault's error object (``{"code", "reason", "message", "retry_after_ms"}``), if this is one."""
        if self.kind != "result" or '"error"' not in self.text:
            return None  # the common case, without parsing the result
        try:
            error = json.loads(self.text).get("error")
        except (ValueError, AttributeError):
            return None
        return error if isinstance(error, dict) and "reason" in error else None


def _fields(data: bytes):
    """The length-delimited fields of an encoded protobuf message, as (number, bytes)."""

    def varint(i):
        value, shift = 0, 0
        while True:
            byte = data[i]
            value, shift, i = value | (byte & 0x7F) << shift, shift + 7, i + 1
            if byte < 0x80:
                return value, i

    i = 0
    while i < len(data):
        tag, i = varint(i)
        wire = tag & 7
        if wire == 0:
            _, i = varint(i)
        elif wire == 2:
            size, i = varint(i)
            yield tag >> 3, data[i : i + size]
            i += size
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            return


def _error_info(details: bytes) -> tuple:
    """(reason, metadata) of the google.rpc.ErrorInfo detail of an encoded google.rpc.Status, if any."""
    for number, detail in _fields(details or b""):
        any_fields = dict(_fields(detail))
        if number != 3 or not any_fields.get(1, b"").endswith(b"google.rpc.ErrorInfo"):
            continue
        info = any_fields.get(2, b"")
        reason, metadata = "", {}
        for field_number, value in _fields(info):
            if field_number == 1:
                reason = value.decode()
            elif field_number == 3:
                pair = dict(_fields(value))
                metadata[pair.get(1, b"").decode()] = pair.get(2, b"").decode()
        return reason, metadata
    return "", {}


def status_error(error: grpc.RpcError) -> CallResult:
    """An error status as a :class:`CallResult` (kind "status")."""
    trailers = dict(error.trailing_metadata() or ())
    pushback = trailers.get("grpc-retry-pushback-ms")
    result = status_result(error.code().name, error.details() or "", trailers.get("grpc-status-details-bin") or b"", None if pushback is None else int(pushback))
    next_index = trailers.get(NEXT_INDEX_KEY)
    return result if next_index is None else replace(result, next_index=int(next_index))


#: The trailer of every CallTool status the episode decided: the index its next call takes.
NEXT_INDEX_KEY = "toolenv-next-index"


def status_result(code: str, message: str, details: bytes, retry_after_ms: Optional[int]) -> CallResult:
    """An error status, given as its code's name, message, encoded google.rpc.Status and
    retry pushback, as a :class:`CallResult` (kind "status")."""
    reason, metadata = _error_info(details)
    virtual = metadata.get("retry_after_virtual_ms")
    body: dict = {"code": code, "message": message}
    if reason:
        body["reason"] = reason
    retry_after_virtual_ms = None if virtual is None else int(virtual)
    if retry_after_ms is not None:
        body["retry_after_ms"] = retry_after_ms
    if retry_after_virtual_ms is not None:
        body["retry_after_virtual_ms"] = retry_after_virtual_ms
    return CallResult(
        text=json.dumps({"error": body}, separators=(",", ":")),
        kind="status",
        code=code,
        reason=reason,
        retry_after_ms=retry_after_ms,
        retry_after_virtual_ms=retry_after_virtual_ms,
        details=metadata,
    )


def create_request(
    task_id: str,
    *,
    seed: int = 0,
    trial: int = 0,
    epsilon: float = 0.0,
    faults: Union[str, pb.FaultProfile, None] = None,
    only: Sequence[str] = (),
    delivery: Union[str, int, None] = None,
    time_scale: Optional[float] = None,
) -> pb.CreateEpisodeRequest:
    """The CreateEpisodeRequest of :meth:`Client.create_episode` (shared with the asyncio client)."""
    profile = pb.FaultProfile(name=faults, only=list(only)) if isinstance(faults, str) else faults
    return pb.CreateEpisodeRequest(
        task_id=task_id,
        seed=seed,
        trial=trial,
        epsilon=epsilon,
        fault_profile=profile,
        fault_delivery=fault_delivery(delivery),
        time_scale=time_scale,
    )


def call_request(
    episode_id: str,
    tool: str,
    arguments: Arguments = None,
    *,
    idempotency_key: str = "",
    waited_ms: Optional[int] = None,
    expected_index: Optional[int] = None,
) -> pb.CallToolRequest:
    """The CallToolRequest of :meth:`Client.call_tool` (shared with the asyncio client).
    ``expected_index``: the index the call is to take; the server applies an index once and
    answers a repeat with the recorded reply, so a call whose outcome is unknown is safe to send again."""
    return pb.CallToolRequest(
        episode_id=episode_id,
        tool_name=tool,
        arguments_json=arguments_json(arguments),
        idempotency_key=idempotency_key,
        waited_ms=waited_ms,
        expected_index=expected_index,
    )


def answer_schema(source: Union[pb.Task, pb.Episode, str, None]) -> Optional[dict]:
    """The JSON Schema of a task's typed answer (``answer_schema_json`` of a Task or an
    Episode, or that text) as a dict; None for a task that asks for no value."""
    text = source if isinstance(source, str) or source is None else source.answer_schema_json
    if not text:
        return None
    schema = json.loads(text)
    return schema if isinstance(schema, dict) and schema else None


def answer_json_text(answer_json: Union[Mapping[str, Any], str, None]) -> Optional[str]:
    """A typed answer as the JSON text FinishEpisode takes: a mapping is serialized, text passes unchanged."""
    if answer_json is None or isinstance(answer_json, str):
        return answer_json
    if not isinstance(answer_json, Mapping):
        raise TypeError(f"answer_json must be a JSON object (a dict) or its text, not {type(answer_json).__name__}")
    return json.dumps(dict(answer_json), separators=(",", ":"), ensure_ascii=False)


def finish_request(
    episode_id: str,
    *,
    usage: Optional[pb.Usage] = None,
    answer: Optional[str] = None,
    answer_json: Union[Mapping[str, Any], str, None] = None,
    **extra: Any,
) -> pb.FinishEpisodeRequest:
    """The FinishEpisodeRequest of :meth:`Client.finish_episode` (shared with the asyncio client).
    ``answer`` is the prose answer; ``answer_json`` the typed one (a dict of the fields the
    episode's answer schema names, or its JSON text), judged field by field instead of ``answer``.
    ``extra`` sets further request fields this proto version has (None: left unset)."""
    request = pb.FinishEpisodeRequest(episode_id=episode_id, usage=usage, answer=answer, answer_json=answer_json_text(answer_json))
    for name, value in extra.items():
        if value is not None:
            setattr(request, name, value)  # an unknown field raises AttributeError
    return request


def reply_result(reply: pb.CallToolResponse) -> CallResult:
    """A CallTool reply (a result or a domain error) as a :class:`CallResult`."""
    if reply.WhichOneof("outcome") == "error":
        text = json.dumps({"domain_error": {"code": reply.error.code, "message": reply.error.message}}, separators=(",", ":"))
        return CallResult(text=text, kind="domain_error", call_index=reply.call_index, code=reply.error.code, next_index=reply.call_index + 1)
    result = CallResult(text=reply.result_json, kind="result", call_index=reply.call_index, next_index=reply.call_index + 1)
    fault = result.in_band_fault()
    if fault is not None:
        return CallResult(
            text=reply.result_json,
            kind="result",
            call_index=reply.call_index,
            code=str(fault.get("code", "")),
            reason=str(fault.get("reason", "")),
            retry_after_ms=fault.get("retry_after_ms"),
            retry_after_virtual_ms=fault.get("retry_after_virtual_ms"),
            next_index=reply.call_index + 1,
        )
    return result


#: The metadata header that carries a request's episode id, so that a proxy in
#: front of replicas keeps an episode on one replica by hashing it (HAProxy's
#: ``balance hdr(x-toolenv-episode)``, Envoy's ring hash). Servers ignore it.
EPISODE_HEADER = "x-toolenv-episode"


def routed(metadata: Sequence, episode_id: str) -> tuple:
    """``metadata`` with the episode id in :data:`EPISODE_HEADER` (left out when it cannot be a header value)."""
    if episode_id and episode_id.isascii() and episode_id.isprintable():
        return tuple(metadata) + ((EPISODE_HEADER, episode_id),)
    return tuple(metadata)


class Client:
    """A connection to a toolenv server.

    ``url`` is ``host:port`` (``http://`` is accepted and dropped). ``token``,
    if given, is sent as ``authorization: Bearer <token>`` with every request;
    ``metadata`` adds other headers.
    """

    def __init__(self, url: str, *, token: Optional[str] = None, metadata: Sequence = (), channel: Optional[grpc.Channel] = None):
        target = url.split("://", 1)[1] if "://" in url else url
        self.url = target
        self.channel = channel or grpc.insecure_channel(target)
        self.metadata = tuple(metadata) + ((("authorization", f"Bearer {token}"),) if token else ())
        self.env = pb_grpc.ToolEnvStub(self.channel)
        self.runs = pb_grpc.RunsStub(self.channel)

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ToolEnv

    def list_tasks(self, domain: int = pb.DOMAIN_UNSPECIFIED, level: int = 0) -> list:
        return list(self.env.ListTasks(pb.ListTasksRequest(domain=domain, level=level), metadata=self.metadata).tasks)

    def get_task(self, task_id: str) -> pb.Task:
        return self.env.GetTask(pb.GetTaskRequest(task_id=task_id), metadata=self.metadata)

    def create_episode(self, task_id: str, **settings: Any) -> pb.Episode:
        """Starts an episode; ``settings`` are :func:`create_request`'s (seed, trial, epsilon,
        faults: a profile name (λ preset, ablation, server profile) or a FaultProfile, only,
        delivery, time_scale)."""
        request = create_request(task_id, **settings)
        return self.env.CreateEpisode(request, metadata=self.metadata)

    def call_tool_raw(
        self,
        episode_id: str,
        tool: str,
        arguments: Arguments = None,
        *,
        idempotency_key: str = "",
        waited_ms: Optional[int] = None,
        expected_index: Optional[int] = None,
    ) -> pb.CallToolResponse:
        """One CallTool; error statuses raise grpc.RpcError."""
        request = call_request(
            episode_id, tool, arguments, idempotency_key=idempotency_key, waited_ms=waited_ms, expected_index=expected_index
        )
        return self.env.CallTool(request, metadata=routed(self.metadata, episode_id))

    def call_tool(
        self,
        episode_id: str,
        tool: str,
        arguments: Arguments = None,
        *,
        idempotency_key: str = "",
        waited_ms: Optional[int] = None,
        expected_index: Optional[int] = None,
    ) -> CallResult:
        """One CallTool, its outcome (error statuses included) as a :class:`CallResult`; with
        ``expected_index``, the index the call is to take (see :func:`call_request`)."""
        try:
            reply = self.call_tool_raw(
                episode_id, tool, arguments, idempotency_key=idempotency_key, waited_ms=waited_ms, expected_index=expected_index
            )
        except grpc.RpcError as error:
            return status_error(error)
        return reply_result(reply)

    def fork_episode(
        self, episode_id: str, calls: int, *, delivery: Union[str, int, None] = None, time_scale: Optional[float] = None
    ) -> pb.Episode:
        """A new live episode in the state ``episode_id`` had after its first ``calls`` calls (ForkEpisode)."""
        request = pb.ForkEpisodeRequest(episode_id=episode_id, calls=calls, fault_delivery=fault_delivery(delivery), time_scale=time_scale)
        return self.env.ForkEpisode(request, metadata=routed(self.metadata, episode_id))

    def finish_episode(
        self,
        episode_id: str,
        *,
        usage: Optional[pb.Usage] = None,
        answer: Optional[str] = None,
        answer_json: Union[Mapping[str, Any], str, None] = None,
        **extra: Any,
    ) -> pb.Verdict:
        """Ends an episode and returns the verdict. ``answer``: the prose answer; ``answer_json``:
        the typed answer, a dict of the fields :func:`answer_schema` names (or its JSON text),
        judged instead of ``answer``; ``extra`` sets further request fields this proto version has."""
        request = finish_request(episode_id, usage=usage, answer=answer, answer_json=answer_json, **extra)
        return self.env.FinishEpisode(request, metadata=routed(self.metadata, episode_id))

    def answer_schema(self, task_id: str) -> Optional[dict]:
        """The JSON Schema of a task's typed answer (GetTask), None when it asks for no value;
        an episode's is :func:`answer_schema` of the Episode."""
        return answer_schema(self.get_task(task_id))

    def trajectory(self, episode_id: str) -> pb.Trajectory:
        return self.env.GetTrajectory(pb.GetTrajectoryRequest(episode_id=episode_id), metadata=routed(self.metadata, episode_id))

    # Runs

    def create_run(self, **fields: Any) -> pb.Run:
        """Plans a hosted run; ``fields`` are CreateRunRequest's (agents=[...], fault_profiles=[...], ...)."""
        return self.runs.CreateRun(pb.CreateRunRequest(**fields), metadata=self.metadata)

    def get_run(self, run_id: str) -> pb.Run:
        return self.runs.GetRun(pb.GetRunRequest(run_id=run_id), metadata=self.metadata)

    def next_episode(self, run_id: str, *, agent: str = "", worker: str = "") -> pb.NextEpisodeResponse:
        return self.runs.NextEpisode(pb.NextEpisodeRequest(run_id=run_id, agent=agent, worker=worker), metadata=self.metadata)

    def run_report(self, run_id: str, *, exclude_infra_errors: bool = False, feasible_only: bool = False) -> pb.RunReport:
        request = pb.GetRunReportRequest(run_id=run_id, exclude_infra_errors=exclude_infra_errors, feasible_only=feasible_only)
        return self.runs.GetRunReport(request, metadata=self.metadata)
