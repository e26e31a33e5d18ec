"""What the SSH fakes share: their switches served from one asyncio event-loop thread, a call
into that loop from the test's thread, and a close that stops every server and task."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from typing import Any


class LoopFleet:
    """Switches (each with a `server`, an asyncssh acceptor or None) served from one event-loop
    thread; `close()` stops them all."""

    switches: Mapping[str, Any]

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def _call(self, fn: Callable[[], Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(fn(), self.loop).result(30)

    def _stopping(self, switch: Any) -> None:
        """What a switch stops besides its server (a fake's own timers)."""

    def close(self) -> None:
        async def shutdown() -> None:
            for switch in self.switches.values():
                self._stopping(switch)
                if switch.server is not None:
                    switch.server.close()
                    await switch.server.wait_closed()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        self._call(shutdown)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()
