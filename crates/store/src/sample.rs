//! A sample of the history's text, for judging which scripts it is
//! written in (which model embeds it when the config names none).

use crate::{Result, Store};

impl Store {
    /// The first `chars` characters of each of the `limit` newest messages.
    pub fn text_sample(&self, limit: usize, chars: usize) -> Result<Vec<String>> {
        let read = || -> rusqlite::Result<Vec<String>> {
            let mut stmt = self
                .conn()
                .prepare("SELECT substr(text, 1, ?1) FROM messages ORDER BY id DESC LIMIT ?2")?;
            let rows = stmt.query_map(rusqlite::params![chars as i64, limit as i64], |r| {
                r.get::<_, String>(0)
            })?;
            rows.collect()
        };
        read().map_err(|e| self.wrap(e))
    }
}
