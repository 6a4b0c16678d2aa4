"""One toolenv episode played by a LangGraph ReAct agent through
`toolenv mcp`, its tools loaded by `langchain-mcp-adapters`, against any
OpenAI-compatible chat-completions endpoint; prints the verdict as JSON.

The agent gets the episode's tools (not `finish`): when it stops, this
script ends the episode with the agent's last message as the answer and
prints what `finish` returned (the verdict).

    pip install -r examples/python/requirements-frameworks.txt
    python examples/python/langgraph_mcp.py travel/cheapest-flight/001 \
        --model gpt-4o-mini --base-url https://api.openai.com/v1   # OPENAI_API_KEY
"""

import os

from langchain_mcp_adapters.tools import load_mcp_tools
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import ToolNode, create_react_agent
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from episode_args import finish, main  # beside this script


async def play(task, model, base_url, toolenv="toolenv", server_args=(), api_key=None, recursion_limit=60):
    """Plays `task` with `model` at `base_url`; returns what `finish` returned (a dict)."""
    parameters = StdioServerParameters(command=toolenv, args=list(server_args or ["mcp", task]), env={**os.environ, "RUST_LOG": "warn"})
    async with stdio_client(parameters) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            prompt = await session.get_prompt("task")
            tools = [t for t in await load_mcp_tools(session) if t.name != "finish"]

            llm = ChatOpenAI(model=model, base_url=base_url, api_key=api_key or os.environ.get("OPENAI_API_KEY") or "none", temperature=0)
            # A tool's error (an isError result, or a JSON-RPC error such as a timeout)
            # goes back to the model as the tool's output, as the OpenAI Agents SDK does.
            agent = create_react_agent(llm, ToolNode(tools, handle_tool_errors=True))
            state = await agent.ainvoke(
                {"messages": [("user", prompt.messages[0].content.text)]}, {"recursion_limit": recursion_limit}
            )
            last = state["messages"][-1]
            usage = [m.usage_metadata for m in state["messages"] if getattr(m, "usage_metadata", None)]
            return await finish(
                session.call_tool,
                {
                    "answer": str(last.content or ""),
                    "input_tokens": sum(u["input_tokens"] for u in usage),
                    "output_tokens": sum(u["output_tokens"] for u in usage),
                },
            )


if __name__ == "__main__":
    main(play, __doc__.split("\n\n")[0])
