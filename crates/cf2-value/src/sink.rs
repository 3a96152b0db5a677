//! A value as a stream of pieces: [`Sink`] receives them in output order, so a writer can
//! produce text as the evaluator computes the value, without first building a [`Value`]
//! (compiling many hosts spent a tenth of its time building and dropping those).
//!
//! The order of calls is that of a depth-first walk: a scalar is one call; a list is
//! `begin_list`, its elements, `end_list`; a block is `begin_block`, then `key` followed by
//! the member's value for each member, then `end_block`. [`Value::emit`] walks a value this
//! way and [`Builder`] turns the calls back into a value.
//!
//! A producer that fails part-way stops calling: what the sink holds then is incomplete and
//! is thrown away. Sinks never panic on an incomplete or ill-formed sequence of calls.

use crate::{Block, Number, Value};

/// The kind of a text value (each writes as a string in JSON; cf2 tells them apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    Literal,
    String,
    Regex,
}

/// Receives a value piece by piece (see the module documentation).
pub trait Sink {
    fn text(&mut self, text: &str, kind: TextKind);
    fn number(&mut self, n: Number);
    fn boolean(&mut self, b: bool);
    /// `len`: how many elements follow.
    fn begin_list(&mut self, len: usize);
    fn end_list(&mut self);
    /// `len`: at most how many members follow (private ones may be left out).
    fn begin_block(&mut self, len: usize);
    /// The name of the member whose value comes next.
    fn key(&mut self, name: &str);
    fn end_block(&mut self);
}

impl Value {
    /// Sends this value to `sink`, piece by piece.
    pub fn emit(&self, sink: &mut dyn Sink) {
        match self {
            Value::Literal(s) => sink.text(s, TextKind::Literal),
            Value::String(s) => sink.text(s, TextKind::String),
            Value::Regex(s) => sink.text(s, TextKind::Regex),
            Value::Number(n) => sink.number(*n),
            Value::Bool(b) => sink.boolean(*b),
            Value::List(items) => crate::deep(|| {
                sink.begin_list(items.len());
                for item in items {
                    item.emit(sink);
                }
                sink.end_list();
            }),
            Value::Block(block) => crate::deep(|| {
                sink.begin_block(block.len());
                for (name, value) in block {
                    sink.key(name);
                    value.emit(sink);
                }
                sink.end_block();
            }),
        }
    }
}

/// A list or block being built.
enum Frame {
    List(Vec<Value>),
    /// The block so far and the name of the member whose value comes next.
    Block(Block, Option<String>),
}

/// A [`Sink`] that builds the [`Value`] it is sent.
#[derive(Default)]
pub struct Builder {
    open: Vec<Frame>,
    done: Option<Value>,
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    /// The value sent, if a whole one was.
    pub fn finish(self) -> Option<Value> {
        if self.open.is_empty() {
            self.done
        } else {
            None
        }
    }

    fn put(&mut self, v: Value) {
        match self.open.last_mut() {
            None => self.done = Some(v),
            Some(Frame::List(items)) => items.push(v),
            Some(Frame::Block(block, name)) => {
                if let Some(name) = name.take() {
                    block.insert(name, v);
                }
            }
        }
    }
}

impl Sink for Builder {
    fn text(&mut self, text: &str, kind: TextKind) {
        let text = text.to_string();
        self.put(match kind {
            TextKind::Literal => Value::Literal(text),
            TextKind::String => Value::String(text),
            TextKind::Regex => Value::Regex(text),
        });
    }

    fn number(&mut self, n: Number) {
        self.put(Value::Number(n));
    }

    fn boolean(&mut self, b: bool) {
        self.put(Value::Bool(b));
    }

    fn begin_list(&mut self, len: usize) {
        self.open.push(Frame::List(Vec::with_capacity(len)));
    }

    fn end_list(&mut self) {
        if let Some(Frame::List(items)) = self.open.pop() {
            self.put(Value::List(items));
        }
    }

    fn begin_block(&mut self, len: usize) {
        let block = Block::with_capacity_and_hasher(len, Default::default());
        self.open.push(Frame::Block(block, None));
    }

    fn key(&mut self, name: &str) {
        if let Some(Frame::Block(_, next)) = self.open.last_mut() {
            *next = Some(name.to_string());
        }
    }

    fn end_block(&mut self) {
        if let Some(Frame::Block(block, _)) = self.open.pop() {
            self.put(Value::Block(block));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_built_value_is_the_value_emitted() {
        let mut inner = Block::default();
        inner.insert("A".into(), Value::Number(Number::Int(1)));
        inner.insert("B".into(), Value::List(vec![]));
        let mut top = Block::default();
        top.insert("X".into(), Value::Block(inner));
        top.insert(
            "Y".into(),
            Value::List(vec![
                Value::Literal("a".into()),
                Value::String("b".into()),
                Value::Regex("^c$".into()),
                Value::Bool(true),
                Value::Number(Number::Float(2.5)),
            ]),
        );
        let value = Value::Block(top);
        let mut b = Builder::new();
        value.emit(&mut b);
        assert_eq!(b.finish(), Some(value));
    }

    #[test]
    fn an_unfinished_value_builds_nothing() {
        let mut b = Builder::new();
        b.begin_block(1);
        b.key("A");
        b.begin_list(2);
        b.number(Number::Int(1));
        assert_eq!(b.finish(), None);
        // Ill-formed calls are ignored rather than panicking.
        let mut b = Builder::new();
        b.end_list();
        b.end_block();
        b.key("A");
        b.boolean(true);
        assert_eq!(b.finish(), Some(Value::Bool(true)));
    }
}
