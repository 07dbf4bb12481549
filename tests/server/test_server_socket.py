"""The listening socket of a real ``teamsync serve``: no Nagle stall on kept-alive connections.

uvicorn writes a response's head and its body in two writes. With Nagle's
algorithm on, the body waits for the client's delayed ACK (about 40 ms on
Linux), so every 200 on a kept-alive connection paid that, while a 304 (a
head only) did not. ``TCP_NODELAY`` on each accepted connection removes it.
The test compares medians of the two on one connection (a ratio-free
difference: a loaded machine slows both alike), never an absolute time.
"""

from __future__ import annotations

import statistics
import time

import httpx2

from teamsync.server.storage import open_storage
from teamsync.wire import PATH
from testing.server import served_process, token_for

ROUNDS = 20
STALL_MS = 20.0
"""Delayed ACK holds a segment for 40 ms at least; a fixed server stays well under half."""


def _median_ms(client: httpx2.Client, headers: dict[str, str], status: int) -> float:
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        resp = client.get(PATH, params={"repo": "acme/widgets"}, headers=headers)
        times.append((time.perf_counter() - start) * 1000)
        assert resp.status_code == status, resp.text
    return statistics.median(times)


def test_a_200_on_a_kept_alive_connection_is_not_held_back(sqlite_url: str) -> None:
    store = open_storage(sqlite_url)
    token = token_for(store)
    store.close()
    with served_process(sqlite_url) as url:
        auth = {"Authorization": f"Bearer {token}"}
        with httpx2.Client(base_url=url, headers=auth, timeout=10) as client:
            body = {"entries": {"a.md": "one memory\n" * 50}}
            put = client.put(PATH, params={"repo": "acme/widgets"}, json=body)
            assert put.status_code == 200, put.text
            etag = put.headers["etag"]
            _median_ms(client, {}, 200)  # warm the connection and the server's caches
            not_modified = _median_ms(client, {"If-None-Match": etag}, 304)
            full = _median_ms(client, {}, 200)
    assert full - not_modified < STALL_MS, (
        f"a 200 took {full:.1f} ms (median) against {not_modified:.1f} ms for a 304 "
        "on the same kept-alive connection: Nagle's algorithm is holding the body back"
    )


def test_writes_in_one_turn_of_the_loop_leave_as_one() -> None:
    """uvicorn writes a response's head and body apart; on a real connection they go out
    in one transport write (one segment), in order; close sends what is held, abort drops it."""
    import asyncio
    import socket as socketlib

    from teamsync.server.runtime import Coalesced

    async def scenario() -> tuple[list[bytes], bytes, bytes]:
        loop = asyncio.get_running_loop()
        ours, theirs = socketlib.socketpair()
        theirs.setblocking(False)
        transport, _ = await loop.connect_accepted_socket(asyncio.Protocol, ours)
        calls: list[bytes] = []
        real_write = transport.write

        def counted(data: bytes) -> None:
            calls.append(bytes(data))
            real_write(data)

        transport.write = counted  # type: ignore[method-assign]
        wrapped = Coalesced(transport, loop)  # type: ignore[arg-type]
        wrapped.write(b"HTTP/1.1 200 OK\r\n\r\n")
        wrapped.write(b'{"ok":true}')
        assert calls == []  # held until the loop turns
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        first = await loop.sock_recv(theirs, 4096)
        wrapped.write(b"tail")
        wrapped.close()  # sends what is held, then closes
        rest = b""
        while chunk := await loop.sock_recv(theirs, 4096):
            rest += chunk
        theirs.close()
        return calls, first, rest

    calls, first, rest = asyncio.run(scenario())
    assert calls == [b'HTTP/1.1 200 OK\r\n\r\n{"ok":true}', b"tail"]
    assert first == b'HTTP/1.1 200 OK\r\n\r\n{"ok":true}' and rest == b"tail"
