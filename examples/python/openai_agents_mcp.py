"""One toolenv episode played by an OpenAI Agents SDK agent through
`toolenv mcp` (the SDK's MCPServerStdio), against any OpenAI-compatible
chat-completions endpoint; prints the verdict as JSON.

The agent gets the episode's tools (not `finish`): when it stops, this
script ends the episode with the agent's final output as the answer and the
tokens the SDK counted, and prints what `finish` returned (the verdict).

    pip install -r examples/python/requirements-frameworks.txt
    python examples/python/openai_agents_mcp.py travel/cheapest-flight/001 \
        --model gpt-4o-mini --base-url https://api.openai.com/v1   # OPENAI_API_KEY
"""

import os

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from agents.mcp import MCPServerStdio, create_static_tool_filter
from openai import AsyncOpenAI

from episode_args import finish, main  # beside this script


async def play(task, model, base_url, toolenv="toolenv", server_args=(), api_key=None, max_turns=30):
    """Plays `task` with `model` at `base_url`; returns what `finish` returned (a dict)."""
    set_tracing_disabled(True)  # the SDK's own traces would go to OpenAI
    client = AsyncOpenAI(base_url=base_url, api_key=api_key or os.environ.get("OPENAI_API_KEY") or "none")
    server = MCPServerStdio(
        params={"command": toolenv, "args": list(server_args or ["mcp", task]), "env": {**os.environ, "RUST_LOG": "warn"}},
        name="toolenv",
        tool_filter=create_static_tool_filter(blocked_tool_names=["finish"]),
        client_session_timeout_seconds=30,
    )
    async with server:
        prompt = await server.get_prompt("task")
        agent = Agent(
            name="toolenv-agent",
            instructions="Use the tools to do the task. Reply with a short summary when it is done.",
            model=OpenAIChatCompletionsModel(model=model, openai_client=client),
            mcp_servers=[server],
        )
        result = await Runner.run(agent, prompt.messages[0].content.text, max_turns=max_turns)
        usage = result.context_wrapper.usage
        return await finish(
            server.call_tool,
            {"answer": str(result.final_output or ""), "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens},
        )


if __name__ == "__main__":
    main(play, __doc__.split("\n\n")[0])
