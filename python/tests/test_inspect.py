"""toolenv suites as Inspect AI tasks (toolenv.integrations.inspect_tasks),
evaluated by Inspect against a real server with Inspect's mockllm model
playing a script: no network."""

import json

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model

from test_env import CHEAPEST, REFERENCE
from toolenv.integrations.inspect_tasks import toolenv_suite

OTHER = "travel/direct-booking/002"


def scripted(input, tools, tool_choice, config):
    """The reference of CHEAPEST, one call per turn (the turn is the number of tool results read), then an answer."""
    step = sum(1 for m in input if isinstance(m, ChatMessageTool))
    if step < len(REFERENCE):
        name, arguments = REFERENCE[step]
        output = ModelOutput.for_tool_call("mockllm/model", name, arguments)
    else:
        output = ModelOutput.from_content("mockllm/model", "Booked AA-500 for Bob.")
    output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
    return output


def run(server, tmp_path, **parameters):
    model = get_model("mockllm/model", custom_outputs=scripted)
    [log] = inspect_eval(
        toolenv_suite(server=server, **parameters), model=model, log_dir=str(tmp_path), display="none", max_samples=2
    )
    assert log.status == "success", log.error
    # What a user reads back: the log file Inspect wrote.
    return read_eval_log(log.location)


def metric(log, reducer):
    [score] = [s for s in log.results.scores if s.reducer == reducer]
    return score.metrics["mean"].value


def test_the_verdict_is_the_score_and_pass_k_comes_out_of_inspects_log(server, tmp_path):
    log = run(server, tmp_path, tasks=f"{CHEAPEST},{OTHER}", trials=2)
    assert log.eval.task_args["trials"] == 2 and log.eval.config.epochs == 2
    by_sample = {}
    for sample in log.samples:
        [score] = sample.scores.values()
        by_sample.setdefault(sample.metadata["task_id"], []).append(score.value)
        checks = score.metadata["checks"]
        assert checks and all({"name", "passed"} <= set(c) for c in checks)
        if sample.metadata["task_id"] == CHEAPEST:
            assert score.value == 1.0 and score.explanation == "passed"
            # The episode's tools were the model's: every scripted call reached the server and succeeded.
            results = [m for m in sample.messages if isinstance(m, ChatMessageTool)]
            assert [m.function for m in results] == [name for name, _ in REFERENCE]
            assert all(m.error is None for m in results)
        else:
            assert score.value == 0.0 and score.explanation.startswith("failed: ")
    assert by_sample == {CHEAPEST: [1.0, 1.0], OTHER: [0.0, 0.0]}
    assert metric(log, "mean") == pytest.approx(0.5)
    # pass^2 = mean over tasks of C(c, 2) / C(2, 2): 1 for CHEAPEST, 0 for OTHER.
    assert metric(log, "pass_k_2") == pytest.approx(0.5)


def test_faults_reach_the_model_as_tool_errors_and_are_counted_in_the_score(server, tmp_path):
    log = run(server, tmp_path, tasks=CHEAPEST, faults="0.3", trials=4, seed=1)
    errors, injected = 0, 0
    for sample in log.samples:
        [score] = sample.scores.values()
        injected += score.metadata["fault_stats"].get("injected", 0)
        for message in sample.messages:
            if isinstance(message, ChatMessageTool) and message.error is not None:
                errors += 1
                assert json.loads(message.error.message)["error"]["code"], message.error
    assert injected > 0 and errors > 0, (injected, errors)


def test_bad_parameters_are_refused_with_what_to_give(server):
    with pytest.raises(ValueError, match="unknown domain 'nowhere'"):
        toolenv_suite(server=server, domain="nowhere")
    with pytest.raises(ValueError, match="tasks not in suite"):
        toolenv_suite(server=server, tasks="travel/none/000")


def test_the_readmes_inspect_eval_command_runs_offline(server, tmp_path):
    """The README's `inspect eval` command line, as written, against the scripted OpenAI-compatible model."""
    import os
    import pathlib
    import re
    import subprocess
    import sys

    repository = pathlib.Path(__file__).resolve().parents[2]
    examples = repository / "examples" / "python"
    model = subprocess.Popen(
        [sys.executable, str(examples / "scripted_model.py"), str(examples / "cheapest_flight_script.json"), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        base_url = re.search(r"http://\S+/v1", model.stdout.readline()).group(0)
        inspect = pathlib.Path(sys.executable).parent / "inspect"
        command = [
            str(inspect), "eval", str(repository / "python/toolenv/integrations/inspect_tasks.py") + "@toolenv_suite",
            "-T", f"server={server}", "-T", f"tasks={CHEAPEST}", "-T", "trials=2",
            "--model", "openai-api/scripted/model", "--model-base-url", base_url,
            "--log-dir", str(tmp_path), "--display", "none",
        ]  # fmt: skip
        done = subprocess.run(command, env={**os.environ, "SCRIPTED_API_KEY": "none"}, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
    finally:
        model.terminate()
        model.wait(timeout=10)
    [path] = list(tmp_path.glob("*.eval"))
    log = read_eval_log(str(path))
    assert (metric(log, "mean"), metric(log, "pass_k_2")) == (1.0, 1.0)


def answering(typed, offered):
    """Checks the slot of the answer task, then calls finish with ``typed`` beside a prose answer;
    keeps the tools offered in ``offered``."""
    from test_typed_answers import CHECK

    def outputs(input, tools, tool_choice, config):
        offered[:] = tools
        step = sum(1 for m in input if isinstance(m, ChatMessageTool))
        if step == 0:
            output = ModelOutput.for_tool_call("mockllm/model", *CHECK)
        else:
            output = ModelOutput.for_tool_call("mockllm/model", "finish", {"answer": "The slot is taken.", **typed})
        output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
        return output

    return outputs


def test_the_finish_tool_takes_the_typed_answer_which_is_judged_and_recorded(server, client, tmp_path):
    from test_typed_answers import REFUSE, RIGHT, SUITE, WRONG

    values = []
    for typed in (RIGHT, WRONG):
        offered = []
        model = get_model("mockllm/model", custom_outputs=answering(typed, offered))
        [log] = inspect_eval(
            toolenv_suite(server=server, suite=SUITE, tasks=REFUSE), model=model, log_dir=str(tmp_path / str(len(values))), display="none"
        )
        assert log.status == "success", log.error
        [sample] = read_eval_log(log.location).samples
        [score] = sample.scores.values()
        assert score.metadata["answer_json"] == typed and score.answer == "The slot is taken."
        # finish was offered with the answer schema's fields, and ended the loop: no model turn after it.
        [finish] = [t for t in offered if t.name == "finish"]
        assert sorted(finish.parameters.required) == ["meeting_holding_slot", "reason"]
        assert finish.parameters.properties["reason"].enum == client.answer_schema(REFUSE)["properties"]["reason"]["enum"]
        calls = [m.function for m in sample.messages if isinstance(m, ChatMessageTool)]
        assert calls == ["check_availability", "finish"]
        trajectory = client.trajectory(score.metadata["episode_id"])
        assert json.loads(trajectory.answer_json) == typed and trajectory.answer == "The slot is taken."
        values.append(score.value)
    assert values == [1.0, 0.0]


# ---------------------------------------------------------------- an Inspect agent through the chaos proxy

def chaos_example():
    """examples/python/inspect_mcp_chaos.py, imported from where it sits."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "inspect_mcp_chaos.py"
    spec = importlib.util.spec_from_file_location("inspect_mcp_chaos", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def through_chaos(input, tools, tool_choice, config):
    """The reference one call per turn (each retried once when it errs), then `finish` until it gives a verdict."""
    output = next_step(input)
    output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)  # else mockllm counts them online
    return output


def next_step(input):
    results = [m for m in input if isinstance(m, ChatMessageTool)]
    done = [m.function for m in results if m.error is None]
    for name, arguments in REFERENCE:
        tries = sum(1 for m in results if m.function == name)
        if name not in done and tries < 2:
            return ModelOutput.for_tool_call("mockllm/model", name, arguments)
    finishes = sum(1 for m in results if m.function == "finish")
    if chaos_example().verdict_of(input) is None and finishes < 4:
        return ModelOutput.for_tool_call("mockllm/model", "finish", {"answer": "Booked AA-500 for Bob."})
    return ModelOutput.from_content("mockllm/model", "Done.")


def test_an_inspect_agent_plays_through_the_chaos_proxy_and_is_scored_by_the_verdict(binary, tmp_path):
    example = chaos_example()
    model = get_model("mockllm/model", custom_outputs=through_chaos)
    judged_under_faults = 0
    for faults, seed in [("0.0", 0), ("0.3", 1), ("0.3", 2), ("0.3", 3)]:
        ledger = tmp_path / f"ledger-{faults}-{seed}.jsonl"
        task_ = example.toolenv_chaos(task_id=CHEAPEST, faults=faults, seed=seed, toolenv=binary, ledger=str(ledger))
        [log] = inspect_eval(task_, model=model, log_dir=str(tmp_path / "logs"), display="none")
        assert log.status == "success", log.error
        [sample] = read_eval_log(log.location).samples
        [score] = sample.scores.values()
        calls = [json.loads(line) for line in ledger.read_text().splitlines()]
        faulted = [c for c in calls if c["fault"]]
        verdict = example.verdict_of(sample.messages)
        if faults == "0.0":
            # No fault: the reference passes, and the score is its verdict.
            assert not faulted and verdict["passed"] and score.value == 1, score
        elif verdict is None:
            # No verdict only when the session was suspended for good.
            assert any(c["fault"]["kind"] == "HardRateLimit" for c in faulted), calls
            assert score.value == 0 and "never" in score.explanation
        else:
            assert score.value == int(verdict["passed"]), (score, verdict)
            judged_under_faults += bool(faulted)
        # A call the proxy failed reached Inspect as a tool error (not a crash of the eval).
        errors = [m for m in sample.messages if isinstance(m, ChatMessageTool) and m.error is not None]
        assert len(errors) <= len(faulted)
    assert judged_under_faults >= 1, "some episode met faults and still got its verdict"
