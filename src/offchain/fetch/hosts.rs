//! At most `per_host` fetches in flight to one host, whatever the number of workers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Hosts remembered before idle ones are forgotten.
const KEEP: usize = 1024;

/// One semaphore per host.
pub(super) struct HostLimits {
    per_host: usize,
    hosts: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl HostLimits {
    pub fn new(per_host: usize) -> Self {
        Self {
            per_host: per_host.max(1),
            hosts: Mutex::new(HashMap::new()),
        }
    }

    /// Waits for a slot on `host`; the slot is freed when the permit is dropped.
    pub async fn acquire(&self, host: &str) -> Option<OwnedSemaphorePermit> {
        let sem = {
            let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
            if hosts.len() >= KEEP && !hosts.contains_key(host) {
                // Forget hosts nobody is fetching from (only the map holds their semaphore).
                hosts.retain(|_, s| Arc::strong_count(s) > 1);
            }
            hosts
                .entry(host.to_ascii_lowercase())
                .or_insert_with(|| Arc::new(Semaphore::new(self.per_host)))
                .clone()
        };
        // The semaphore is never closed, so this only fails if that changes.
        sem.acquire_owned().await.ok()
    }

    #[cfg(test)]
    fn known(&self) -> usize {
        self.hosts.lock().map(|h| h.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn limits_each_host_separately() {
        let l = HostLimits::new(2);
        let a1 = l.acquire("a.test").await;
        let _a2 = l.acquire("A.test").await;
        // A third slot on a.test waits; b.test is free.
        let third = tokio::time::timeout(Duration::from_millis(50), l.acquire("a.test")).await;
        assert!(third.is_err());
        let b = tokio::time::timeout(Duration::from_millis(50), l.acquire("b.test")).await;
        assert!(b.is_ok());
        drop(a1);
        let again = tokio::time::timeout(Duration::from_millis(50), l.acquire("a.test")).await;
        assert!(again.is_ok());
    }

    #[tokio::test]
    async fn forgets_idle_hosts() {
        let l = HostLimits::new(1);
        let busy = l.acquire("busy.test").await;
        for i in 0..KEEP + 10 {
            let _ = l.acquire(&format!("h{i}.test")).await;
        }
        assert!(l.known() < KEEP + 10);
        drop(busy);
    }
}
