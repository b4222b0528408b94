"""Drives /mcp with the official Python MCP SDK (`mcp` 2.3), for test/mcp/python.test.ts.

    python python_client.py <url> <key> <mode> <channel>

<mode> is `legacy` (the 2025 initialize handshake) or a modern revision such as `2026-07-28`.
It lists the tools, posts a message to <channel> with post_message, then calls wait_for_events
from the cursor it had before posting, and prints one JSON object with what it saw.
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, key: str, mode: str, channel: str) -> None:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(60.0))
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        tools = await client.list_tools()
        start = await client.call_tool("wait_for_events", {"timeout_seconds": 0})
        posted = await client.call_tool("post_message", {"channel": channel, "text": f"hello from the Python SDK ({mode})"})
        cursor = start.structured_content["next_cursor"]
        waited = await client.call_tool("wait_for_events", {"cursor": cursor, "timeout_seconds": 10})
        print(
            json.dumps(
                {
                    "protocol_version": client.protocol_version,
                    "tools": sorted(tool.name for tool in tools.tools),
                    "output_schemas": all(tool.output_schema is not None for tool in tools.tools),
                    "posted": posted.structured_content,
                    "posted_error": posted.is_error,
                    "events": waited.structured_content["events"],
                }
            )
        )


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
