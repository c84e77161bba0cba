//! Checking a model's answer. The server was asked to follow the schema,
//! but nothing relies on that: the text is parsed here, and anything but
//! the one JSON object with a listed ref is [`BadAnswer`] — no decision,
//! nothing runs.

use serde_json::Value;

/// What the model picked for `browser_act`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    Ref(String),
    /// The model said no candidate fits.
    None,
}

/// Why an answer is no decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadAnswer {
    NotJson,
    /// JSON, but not the object the schema describes.
    WrongShape,
    /// A ref (or op or input key) that was not in the list.
    OutsideList,
    /// An op without what it needs (a `type` without an input…).
    Incomplete,
}

impl BadAnswer {
    pub fn describe(&self) -> &'static str {
        match self {
            BadAnswer::NotJson => "the model's answer was not JSON",
            BadAnswer::WrongShape => "the model's answer did not follow the schema",
            BadAnswer::OutsideList => "the model answered a ref that was not among the candidates",
            BadAnswer::Incomplete => "the model's step lacked an element or an input",
        }
    }
}

fn object(answer: &str, fields: &[&str]) -> Result<serde_json::Map<String, Value>, BadAnswer> {
    let v: Value = serde_json::from_str(answer.trim()).map_err(|_| BadAnswer::NotJson)?;
    let Value::Object(o) = v else { return Err(BadAnswer::WrongShape) };
    if o.len() != fields.len() || !fields.iter().all(|f| o.get(*f).is_some_and(Value::is_string)) {
        return Err(BadAnswer::WrongShape);
    }
    Ok(o)
}

fn field<'a>(o: &'a serde_json::Map<String, Value>, f: &str) -> &'a str {
    o.get(f).and_then(Value::as_str).unwrap_or_default()
}

/// The `browser_act` answer: `{"ref": r}` with `r` in `refs` or `"none"`.
pub fn check_act(answer: &str, refs: &[String]) -> Result<Pick, BadAnswer> {
    let o = object(answer, &["ref"])?;
    match field(&o, "ref") {
        "none" => Ok(Pick::None),
        r if refs.iter().any(|x| x == r) => Ok(Pick::Ref(r.to_string())),
        _ => Err(BadAnswer::OutsideList),
    }
}

/// One step of a goal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoalStep {
    Click(String),
    /// Type the caller's input `key` into the element.
    Type {
        element_ref: String,
        key: String,
    },
    SelectOption {
        element_ref: String,
        key: String,
    },
    PressEnter(String),
    Done,
}

/// A goal step: `{"op", "ref", "input"}` from the lists; the op decides
/// which of ref and input it needs.
pub fn check_goal(answer: &str, refs: &[String], keys: &[String]) -> Result<GoalStep, BadAnswer> {
    let o = object(answer, &["op", "ref", "input"])?;
    let (op, r, input) = (field(&o, "op"), field(&o, "ref"), field(&o, "input"));
    if !super::prompt::GOAL_OPS.contains(&op)
        || (r != "none" && !refs.iter().any(|x| x == r))
        || (input != "none" && !keys.iter().any(|k| k == input))
    {
        return Err(BadAnswer::OutsideList);
    }
    let need_ref = || if r == "none" { Err(BadAnswer::Incomplete) } else { Ok(r.to_string()) };
    let need_key = || if input == "none" { Err(BadAnswer::Incomplete) } else { Ok(input.to_string()) };
    Ok(match op {
        "click" => GoalStep::Click(need_ref()?),
        "type" => GoalStep::Type { element_ref: need_ref()?, key: need_key()? },
        "select_option" => GoalStep::SelectOption { element_ref: need_ref()?, key: need_key()? },
        "press_enter" => GoalStep::PressEnter(need_ref()?),
        _ => GoalStep::Done,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs() -> Vec<String> {
        vec!["e1".into(), "e7".into()]
    }

    /// Table from `fixtures/model/answers.tsv`: name, answer, expected
    /// (`ref:eN`, `none`, or a [`BadAnswer`] in snake case).
    #[test]
    fn act_answers_from_the_fixture_table() {
        let table = include_str!("../../../fixtures/model/answers.tsv");
        let mut n = 0;
        for row in table.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
            let cols: Vec<&str> = row.split('\t').collect();
            let [name, answer, want] = cols[..] else { panic!("bad row {row:?}") };
            let got = match check_act(answer, &refs()) {
                Ok(Pick::Ref(r)) => format!("ref:{r}"),
                Ok(Pick::None) => "none".into(),
                Err(BadAnswer::NotJson) => "not_json".into(),
                Err(BadAnswer::WrongShape) => "wrong_shape".into(),
                Err(BadAnswer::OutsideList) => "outside_list".into(),
                Err(BadAnswer::Incomplete) => "incomplete".into(),
            };
            assert_eq!(got, want, "{name}");
            n += 1;
        }
        assert!(n >= 10, "only {n} rows");
    }

    #[test]
    fn goal_steps_need_listed_refs_and_keys() {
        let keys = vec!["email".to_string()];
        let ok = |a: &str| check_goal(a, &refs(), &keys);
        assert_eq!(
            ok(r#"{"op":"type","ref":"e1","input":"email"}"#),
            Ok(GoalStep::Type { element_ref: "e1".into(), key: "email".into() })
        );
        assert_eq!(ok(r#"{"op":"done","ref":"none","input":"none"}"#), Ok(GoalStep::Done));
        assert_eq!(ok(r#"{"op":"click","ref":"e7","input":"none"}"#), Ok(GoalStep::Click("e7".into())));
        assert_eq!(ok(r#"{"op":"type","ref":"e1","input":"none"}"#), Err(BadAnswer::Incomplete));
        assert_eq!(ok(r#"{"op":"click","ref":"none","input":"none"}"#), Err(BadAnswer::Incomplete));
        assert_eq!(ok(r#"{"op":"navigate","ref":"e1","input":"none"}"#), Err(BadAnswer::OutsideList));
        assert_eq!(ok(r#"{"op":"type","ref":"e1","input":"a@b.example"}"#), Err(BadAnswer::OutsideList));
        assert_eq!(ok(r#"{"op":"click","ref":"e2","input":"none"}"#), Err(BadAnswer::OutsideList));
        assert_eq!(ok(r#"{"op":"click","ref":"e1"}"#), Err(BadAnswer::WrongShape));
        assert_eq!(ok("click e1"), Err(BadAnswer::NotJson));
    }
}
