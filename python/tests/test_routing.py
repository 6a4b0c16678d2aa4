"""Every request about one episode carries its id in the routing header a proxy hashes on.

Checked on the wire: a gRPC server on a real socket records the metadata each
request arrives with (and refuses the request), for the sync and asyncio clients.
"""

import asyncio
from concurrent import futures

import grpc
import pytest

from toolenv import Client
from toolenv.aio import AsyncClient
from toolenv.client import EPISODE_HEADER

EPISODE = "ep-0123456789abcdef0123456789abcdef"


class Recorder(grpc.GenericRpcHandler):
    """Answers every method UNIMPLEMENTED, keeping (method, routing header) of each request."""

    def __init__(self):
        self.seen = []

    def service(self, details):
        self.seen.append((details.method.rsplit("/", 1)[-1], dict(details.invocation_metadata).get(EPISODE_HEADER)))
        return None


@pytest.fixture()
def recorder():
    recorder = Recorder()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=[recorder])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield recorder, f"127.0.0.1:{port}"
    server.stop(None)


def refused(call):
    with pytest.raises(grpc.RpcError) as error:
        call()
    assert error.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_the_sync_client_routes_each_episode_request(recorder):
    seen, url = recorder
    with Client(url) as client:
        refused(lambda: client.call_tool_raw(EPISODE, "search_flights", {}))
        refused(lambda: client.fork_episode(EPISODE, 1))
        refused(lambda: client.finish_episode(EPISODE))
        refused(lambda: client.trajectory(EPISODE))
        refused(lambda: client.list_tasks())
        # An id that cannot be a header value is sent without the header, not refused by the client.
        refused(lambda: client.trajectory("ep-\u00e9"))
    assert seen.seen == [
        ("CallTool", EPISODE),
        ("ForkEpisode", EPISODE),
        ("FinishEpisode", EPISODE),
        ("GetTrajectory", EPISODE),
        ("ListTasks", None),
        ("GetTrajectory", None),
    ]


def test_the_asyncio_client_routes_each_episode_request(recorder):
    seen, url = recorder

    async def play():
        async with AsyncClient(url, timeout=10) as client:
            result = await client.call_tool(EPISODE, "search_flights", {})
            assert result.kind == "status" and result.code == "UNIMPLEMENTED"
            for request in (client.fork_episode(EPISODE, 1), client.finish_episode(EPISODE), client.trajectory(EPISODE)):
                with pytest.raises(grpc.aio.AioRpcError):
                    await request

    asyncio.run(play())
    assert seen.seen == [("CallTool", EPISODE), ("ForkEpisode", EPISODE), ("FinishEpisode", EPISODE), ("GetTrajectory", EPISODE)]
