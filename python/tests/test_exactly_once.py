"""Calls sent with the index they are to take (``expected_index``): a repeat of an index the
episode holds gets the recorded reply and is not applied again; an index ahead is refused and
says the next one; :class:`toolenv.Tools` sends each call's index and keeps count."""

from toolenv import Client
from toolenv.tools import Tools


def test_a_repeated_index_is_answered_from_the_record(client: Client):
    episode = client.create_episode("scheduling/book-meeting/001", seed=0)
    arguments = {"date": "2026-01-01", "time": "09:00", "topic": "Review"}
    first = client.call_tool(episode.episode_id, "book_meeting", arguments, expected_index=0)
    again = client.call_tool(episode.episode_id, "book_meeting", arguments, expected_index=0)
    assert first.kind == "result" and again.text == first.text and again.call_index == 0
    assert first.next_index == 1 and again.next_index == 1
    assert len(client.trajectory(episode.episode_id).calls) == 1, "applied once"
    ahead = client.call_tool(episode.episode_id, "check_calendar", {"date": "2026-01-01"}, expected_index=5)
    assert ahead.kind == "status" and ahead.code == "FAILED_PRECONDITION" and ahead.next_index == 1, ahead
    assert client.finish_episode(episode.episode_id).passed


def test_tools_send_each_call_with_its_index(client: Client):
    episode = client.create_episode("travel/cheapest-flight/001", seed=0)
    tools = Tools(client, episode)
    tools.call("search_flights", {"origin": "LON", "dest": "PAR", "date": "2026-01-05"})
    tools.call("get_traveler_profile", {"name": "Bob"})
    assert tools.next_index == 2
    assert [c.index for c in client.trajectory(episode.episode_id).calls] == [0, 1]
