//! How the solver plays scheduling tasks: from the task's slots and what the
//! calendar and the availability check say.

use serde_json::{Value, json};

use crate::solver::{GiveUp, Session, Step, Strategy, Usable, accepted, field, kind, list_at, slot, unknown};
use toolenv_core::Task;

impl Strategy for super::State {
    fn solve(task: &Task, s: &mut Session<'_>) -> Step<()> {
        match kind(task) {
            // "Book a meeting about {topic} on {date} at {time}."
            "book-meeting" => {
                let args = json!({"date": slot(task, "date")?, "time": slot(task, "time")?, "topic": slot(task, "topic")?});
                accepted("book_meeting", s.write("book_meeting", args)?).map(drop)
            }
            // "… at {time}. If that slot is taken, book the next free slot later that day instead."
            "conflict" => book_next_free(s, slot(task, "date")?, slot(task, "time")?, slot(task, "topic")?),
            // "Reschedule the {topic} meeting on {date} to the first free slot on {new_date}."
            "reschedule" => {
                let (date, topic) = (slot(task, "date")?, slot(task, "topic")?);
                let time = meeting_time(s, date, topic)?;
                let new_date = slot(task, "new_date")?;
                for new_time in free_slots_from(s, new_date, "09:00")? {
                    let args = json!({"date": date, "time": time, "new_date": new_date, "new_time": new_time});
                    if moved("reschedule_meeting", s.write("reschedule_meeting", args)?)? {
                        return Ok(());
                    }
                }
                Err(GiveUp::Stuck(format!("no free slot on {new_date}")))
            }
            // "Cancel the {topic} meeting on {date}."
            "cancel" => {
                let (date, topic) = (slot(task, "date")?, slot(task, "topic")?);
                let time = meeting_time(s, date, topic)?;
                accepted("cancel_meeting", s.write("cancel_meeting", json!({"date": date, "time": time}))?).map(drop)
            }
            // "Move the '{topic}' meeting on {date} at {time} to {new_date} at {new_time}."
            "move-meeting" => {
                let args = json!({
                    "date": slot(task, "date")?, "time": slot(task, "time")?,
                    "new_date": slot(task, "new_date")?, "new_time": slot(task, "new_time")?,
                });
                accepted("reschedule_meeting", s.write("reschedule_meeting", args)?).map(drop)
            }
            // "Move the meetings '{topic1}', … on {date} to {new_date}: in that order, each to the first slot still free there."
            "reschedule-chain" => {
                let (date, new_date) = (slot(task, "date")?, slot(task, "new_date")?);
                let topics = ["topic1", "topic2", "topic3", "topic4", "topic5"].into_iter().map_while(|name| task.slot(name));
                for topic in topics {
                    let time = meeting_time(s, date, topic)?;
                    move_to_first_free(s, date, &time, new_date)?;
                }
                Ok(())
            }
            // "When is the '{topic}' meeting between {start} and {end}? Answer with its date and start time …"
            "meeting-lookup" => {
                let topic = slot(task, "topic")?;
                let args = json!({"start_date": slot(task, "start")?, "end_date": slot(task, "end")?});
                let find = |v: &Value| {
                    list_at(v, "/meetings")
                        .iter()
                        .find(|m| field(m, "topic") == topic)
                        .map(|m| (field(m, "date").to_owned(), field(m, "time").to_owned()))
                };
                let answer = s.read_if("list_meetings", args, &|v| find(v).is_some())?;
                let (date, time) =
                    find(&accepted("list_meetings", answer)?).ok_or_else(|| GiveUp::Stuck(format!("no '{topic}' meeting")))?;
                s.answer(&format!("The '{topic}' meeting is on {date} at {time}."));
                Ok(())
            }
            // "Book … on {date} at {time}. Only that slot will do: if it is taken, book nothing … and tell me which meeting holds it."
            "refuse-booking" => {
                let (date, time, topic) = (slot(task, "date")?, slot(task, "time")?, slot(task, "topic")?);
                let answer = s.read_if("check_availability", json!({"date": date, "time": time}), &|v| v.get("available").is_some())?;
                let availability = accepted("check_availability", answer)?;
                match availability.pointer("/conflict/topic").and_then(Value::as_str) {
                    Some(holder) => {
                        s.answer(&format!("I booked nothing: {time} on {date} is already taken by '{holder}'."));
                        Ok(())
                    }
                    None => {
                        accepted("book_meeting", s.write("book_meeting", json!({"date": date, "time": time, "topic": topic}))?).map(drop)
                    }
                }
            }
            _ => Err(unknown(task)),
        }
    }
}

/// Moves the meeting at `time` on `date` to the first free slot of `new_date`.
fn move_to_first_free(s: &mut Session<'_>, date: &str, time: &str, new_date: &str) -> Step<()> {
    for new_time in free_slots_from(s, new_date, "09:00")? {
        let args = json!({"date": date, "time": time, "new_date": new_date, "new_time": new_time});
        if moved("reschedule_meeting", s.write("reschedule_meeting", args)?)? {
            return Ok(());
        }
    }
    Err(GiveUp::Stuck(format!("no free slot on {new_date}")))
}

/// Books at `time`, or at the next free slot after it the same day.
fn book_next_free(s: &mut Session<'_>, date: &str, time: &str, topic: &str) -> Step<()> {
    for slot_time in free_slots_from(s, date, time)? {
        if moved("book_meeting", s.write("book_meeting", json!({"date": date, "time": slot_time, "topic": topic}))?)? {
            return Ok(());
        }
    }
    Err(GiveUp::Stuck(format!("no free slot on {date} from {time}")))
}

/// Whether a booking or a move went through; a slot taken meanwhile means
/// "try the next one", any other refusal ends the task.
fn moved(tool: &str, answer: Usable) -> Step<bool> {
    match answer {
        Usable::Ok(_) => Ok(true),
        Usable::Rejected(code, _) if code == "SLOT_TAKEN" => Ok(false),
        Usable::Rejected(code, message) => Err(GiveUp::Rejected { tool: tool.to_owned(), code, message }),
    }
}

/// The free slots of a day at or after `time`, earliest first, as the
/// availability check lists them. The list is in time order, so a cut list
/// keeps its earliest slots: one with no slot at or after `time` (unless
/// `time` itself is free) may be cut and is read again.
fn free_slots_from(s: &mut Session<'_>, date: &str, time: &str) -> Step<Vec<String>> {
    let later = |v: &Value| -> Vec<String> {
        let free = v.get("available").and_then(Value::as_bool) == Some(true);
        let listed = list_at(v, "/free_slots").iter().filter_map(Value::as_str).filter(|t| *t > time).map(str::to_owned);
        free.then(|| time.to_owned()).into_iter().chain(listed).collect()
    };
    let answer = s.read_if("check_availability", json!({"date": date, "time": time}), &|v| !later(v).is_empty())?;
    Ok(later(&accepted("check_availability", answer)?))
}

/// The start time of the meeting about `topic` on `date`, read from the calendar.
fn meeting_time(s: &mut Session<'_>, date: &str, topic: &str) -> Step<String> {
    let find = |v: &Value| list_at(v, "/meetings").iter().find(|m| field(m, "topic") == topic).map(|m| field(m, "time").to_owned());
    let answer = s.read_if("check_calendar", json!({"date": date}), &|v| find(v).is_some())?;
    find(&accepted("check_calendar", answer)?).ok_or_else(|| GiveUp::Stuck(format!("no '{topic}' meeting on {date}")))
}
