"""Adapters to RL frameworks (imported on demand: each needs its framework installed).

- :mod:`toolenv.integrations.skyrl`: SkyRL-gym's ``BaseTextEnv`` (text in, text out),
  for SkyRL's trainer and anything else that steps SkyRL-gym environments.
- :mod:`toolenv.integrations.inspect_tasks`: the suite as Inspect AI tasks
  (``inspect eval .../inspect_tasks.py@toolenv_suite``): a sample per episode,
  the verdict as the score, pass^k from Inspect's log.

Another framework plugs in the same way: wrap :class:`toolenv.Client` (or
:class:`toolenv.aio.AsyncToolEnv` where the framework is asyncio-native) in the
framework's environment class; start an episode where it starts one, read the
model's reply with :func:`toolenv.calls.parse_reply`, play the calls, and score
the end with a :class:`toolenv.rewards.Reward` (see python/README.md, "RL").
"""
