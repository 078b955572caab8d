//! A real `cellscope serve` on `127.0.0.1:<free port>`: started from the given binary, ready once it answers
//! `/api/index`, killed on drop.

use crate::config::Config;
use crate::http::{self, HttpResponse};
use anyhow::{Context, bail};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the server may take to index the data and listen: seconds for the demo data, a minute or more for the
/// `--scale 34` root (9.8 million rows) on two busy cores.
const START_TIMEOUT: Duration = Duration::from_secs(300);

pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`, without a trailing slash.
    base: String,
    log: Arc<Mutex<String>>,
    _cache: tempfile::TempDir,
}

impl Server {
    /// Starts `cellscope serve DATA --addr 127.0.0.1:0` and waits until it answers. The port is the one the
    /// server reports (`cellscope serving url=…`), so parallel runs never race for a port.
    pub fn start(config: &Config) -> anyhow::Result<Self> {
        Server::start_with(config, config.data.as_os_str(), &[], &[])
    }

    /// [`Server::start`] on another data root (a directory or a bucket URL), with more arguments and environment.
    pub fn start_with(
        config: &Config,
        data: &std::ffi::OsStr,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        // Kept snapshots go to a directory of this server's own, removed with it.
        let cache = tempfile::tempdir().context("a cache directory for the server")?;
        let mut command = Command::new(&config.bin);
        command
            .arg("serve")
            .arg(data)
            .args(["--addr", "127.0.0.1:0"])
            // The browser reaches the server under this name too, as a shared server's users would.
            .args(["--allow-host", "cellscope.test"]);
        if !args.contains(&"--cache") {
            command.arg("--cache").arg(cache.path());
        }
        let mut child = command
            .args(args)
            .envs(env.iter().copied())
            .env("CELLSCOPE_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", config.bin.display()))?;
        let stderr = child.stderr.take().context("the server's stderr")?;
        let log = Arc::new(Mutex::new(String::new()));
        let (lines_tx, lines_rx) = mpsc::channel();
        let log_writer = Arc::clone(&log);
        // Drains stderr for the server's whole life (a full pipe would block it) and keeps it for failure reports.
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Ok(mut log) = log_writer.lock() {
                    log.push_str(&line);
                    log.push('\n');
                }
                let _ = lines_tx.send(line);
            }
        });
        let mut server = Self {
            child,
            base: String::new(),
            log,
            _cache: cache,
        };
        server.base = server.wait_for_url(&lines_rx)?;
        server.wait_until_answering()?;
        Ok(server)
    }

    fn wait_for_url(&mut self, lines: &mpsc::Receiver<String>) -> anyhow::Result<String> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) if line.contains("cellscope serving") => {
                    let url = line
                        .split_whitespace()
                        .find_map(|word| word.strip_prefix("url="))
                        .with_context(|| format!("no url= in `{line}`"))?;
                    if line.contains("app=false") {
                        bail!(
                            "{} was built without the web app (target/web/ was empty when it was compiled): \
                             run the tests through `cargo xtask e2e` or `cargo xtask ci`, which run build-web \
                             before building the server",
                            self.describe_binary()
                        );
                    }
                    return Ok(url.trim_end_matches('/').to_string());
                }
                Ok(_) => {}
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    bail!(
                        "the server did not report its address within {START_TIMEOUT:?}; its log:\n{}",
                        self.log()
                    )
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait().ok();
                    bail!(
                        "the server exited ({status:?}) before serving; its log:\n{}",
                        self.log()
                    )
                }
            }
        }
    }

    fn wait_until_answering(&self) -> anyhow::Result<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            match self.get("/api/index") {
                Ok(response) if response.status == 200 => return Ok(()),
                outcome if Instant::now() >= deadline => {
                    bail!(
                        "GET /api/index did not answer 200 within {START_TIMEOUT:?} (last: {outcome:?}); server log:\n{}",
                        self.log()
                    )
                }
                _ => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    fn describe_binary(&self) -> String {
        format!("the cellscope binary (pid {})", self.child.id())
    }

    /// `http://127.0.0.1:PORT` followed by `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `GET path` straight to the server.
    pub fn get(&self, path: &str) -> anyhow::Result<HttpResponse> {
        http::get(&self.url(path))
    }

    /// Stops the server now (a test of what works without it); dropping it later does nothing more.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Everything the server wrote to stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().map(|log| log.clone()).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
