use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::Value;

use crate::ports::{
    ModelClient, ModelError, ModelReply, ModelRequest, SessionStore, SessionStoreError, Shell,
    ShellError, ShellOutcome, ShellRequest,
};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every mutation is a single push or pop, so a poisoned lock still guards consistent data.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A custom entry held by a [`MemorySessionStore`].
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedEntry {
    /// The entry's custom type.
    pub custom_type: String,
    /// The entry's data.
    pub data: Value,
}

/// An in-memory [`SessionStore`]: one branch, entries in append order.
#[derive(Debug, Default)]
pub struct MemorySessionStore {
    entries: Mutex<Vec<RecordedEntry>>,
    no_session: bool,
}

impl MemorySessionStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// A store that answers every call with [`SessionStoreError::NoSession`].
    pub fn without_session() -> Self {
        MemorySessionStore {
            entries: Mutex::default(),
            no_session: true,
        }
    }

    /// Adds an entry as if it had been appended earlier (for example, by a previous run).
    pub fn with_entry(self, custom_type: impl Into<String>, data: Value) -> Self {
        lock(&self.entries).push(RecordedEntry {
            custom_type: custom_type.into(),
            data,
        });
        self
    }

    /// Every entry, of every type, oldest first.
    pub fn entries(&self) -> Vec<RecordedEntry> {
        lock(&self.entries).clone()
    }
}

impl SessionStore for MemorySessionStore {
    fn append_custom(&self, custom_type: &str, data: &Value) -> Result<(), SessionStoreError> {
        if self.no_session {
            return Err(SessionStoreError::NoSession);
        }
        lock(&self.entries).push(RecordedEntry {
            custom_type: custom_type.to_owned(),
            data: data.clone(),
        });
        Ok(())
    }

    fn custom_entries(&self, custom_type: &str) -> Result<Vec<Value>, SessionStoreError> {
        if self.no_session {
            return Err(SessionStoreError::NoSession);
        }
        Ok(lock(&self.entries)
            .iter()
            .filter(|entry| entry.custom_type == custom_type)
            .map(|entry| entry.data.clone())
            .collect())
    }
}

/// Queued answers and the requests that consumed them.
#[derive(Debug)]
struct Script<Request, Answer> {
    answers: VecDeque<Answer>,
    requests: Vec<Request>,
}

impl<Request, Answer> Default for Script<Request, Answer> {
    fn default() -> Self {
        Script {
            answers: VecDeque::new(),
            requests: Vec::new(),
        }
    }
}

/// A [`Shell`] that answers from a queue of scripted results, in order, and records every
/// request. Once the queue is empty, every call fails with [`ShellError::Failed`].
#[derive(Debug, Default)]
pub struct ScriptedShell {
    script: Mutex<Script<ShellRequest, Result<ShellOutcome, ShellError>>>,
}

impl ScriptedShell {
    /// A shell with nothing queued.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues a command that ends with `outcome`.
    pub fn with_outcome(self, outcome: ShellOutcome) -> Self {
        self.push(Ok(outcome));
        self
    }

    /// Queues a command that cannot be run.
    pub fn with_error(self, error: ShellError) -> Self {
        self.push(Err(error));
        self
    }

    /// Queues any result.
    pub fn push(&self, result: Result<ShellOutcome, ShellError>) {
        lock(&self.script).answers.push_back(result);
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<ShellRequest> {
        lock(&self.script).requests.clone()
    }

    /// How many queued results have not been used yet.
    pub fn remaining(&self) -> usize {
        lock(&self.script).answers.len()
    }
}

impl Shell for ScriptedShell {
    fn run(&self, request: &ShellRequest) -> Result<ShellOutcome, ShellError> {
        let mut script = lock(&self.script);
        script.requests.push(request.clone());
        script.answers.pop_front().unwrap_or_else(|| {
            Err(ShellError::Failed {
                message: format!(
                    "scripted shell has no outcome left for {:?}",
                    request.command
                ),
            })
        })
    }
}

/// A [`ModelClient`] that answers from a queue of scripted results, in order, and records
/// every request. Once the queue is empty, every call fails with [`ModelError::Failed`].
#[derive(Debug, Default)]
pub struct ScriptedModelClient {
    script: Mutex<Script<ModelRequest, Result<ModelReply, ModelError>>>,
}

impl ScriptedModelClient {
    /// A client with nothing queued.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues a reply with `text` and no usage.
    pub fn with_reply(self, text: impl Into<String>) -> Self {
        self.push(Ok(ModelReply::text(text)));
        self
    }

    /// Queues a reply with `text` that used these tokens.
    pub fn with_reply_using(
        self,
        text: impl Into<String>,
        input_tokens: u64,
        output_tokens: u64,
    ) -> Self {
        self.push(Ok(
            ModelReply::text(text).with_usage(input_tokens, output_tokens)
        ));
        self
    }

    /// Queues a failed call.
    pub fn with_error(self, error: ModelError) -> Self {
        self.push(Err(error));
        self
    }

    /// Queues any result.
    pub fn push(&self, result: Result<ModelReply, ModelError>) {
        lock(&self.script).answers.push_back(result);
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        lock(&self.script).requests.clone()
    }

    /// How many queued results have not been used yet.
    pub fn remaining(&self) -> usize {
        lock(&self.script).answers.len()
    }
}

impl ModelClient for ScriptedModelClient {
    fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        let mut script = lock(&self.script);
        script.requests.push(request.clone());
        script.answers.pop_front().unwrap_or_else(|| {
            Err(ModelError::Failed {
                message: format!(
                    "scripted model client has no reply left for {}/{}",
                    request.provider, request.model
                ),
            })
        })
    }
}
