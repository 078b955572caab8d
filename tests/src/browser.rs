//! Headless Chromium through chromedriver: a chromedriver on a free loopback port, one WebDriver session with a
//! fresh profile, and chromedriver's browser-console log.
//!
//! chromedriver and the Chromium processes it starts share a process group of their own, which `Drop` kills as a
//! whole: a test that panics mid-way leaves no browser behind. (Chromium's crash-report handlers put themselves in
//! a session of their own, so they escape the group; they exit by themselves once Chromium is gone.)

use crate::config::Config;
use crate::http;
use anyhow::{Context, bail};
use fantoccini::wd::{Capabilities, WebDriverCompatibleCommand};
use fantoccini::{Client, ClientBuilder};
use serde::Deserialize;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Chromium's flags: headless on a machine without network access. Without the background-networking flags,
/// Chromium keeps trying to reach Google's hosts and logs refused connections.
const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
    // A host name that is not loopback, for what a plain-HTTP shared server looks like (not a secure context).
    "--host-resolver-rules=MAP cellscope.test 127.0.0.1",
];

const DRIVER_TIMEOUT: Duration = Duration::from_secs(30);

/// One console message of the page, as chromedriver reports it.
#[derive(Clone, Debug, Deserialize)]
pub struct LogEntry {
    /// `SEVERE`, `WARNING`, `INFO` or `DEBUG`.
    pub level: String,
    pub message: String,
    /// Milliseconds since the Unix epoch.
    pub timestamp: f64,
}

pub struct Browser {
    client: Option<Client>,
    driver: Child,
    /// The Chromium profile and chromedriver's log; removed on drop, after the processes are gone.
    profile: tempfile::TempDir,
}

/// A port nobody listens on right now (chromedriver cannot be asked to pick one and report it).
fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl Browser {
    /// Starts chromedriver and opens a session.
    pub async fn start(config: &Config) -> anyhow::Result<Self> {
        let profile = tempfile::Builder::new()
            .prefix("cellscope-e2e-")
            .tempdir()
            .context("creating a Chromium profile directory")?;
        let log_path = profile.path().join("chromedriver.log");
        let (driver, driver_url) = spawn_driver(config, &log_path)?;
        let mut browser = Self {
            client: None,
            driver,
            profile,
        };

        let user_data_dir = browser.profile.path().join("chromium");
        let mut args: Vec<String> = CHROMIUM_FLAGS.iter().map(|flag| flag.to_string()).collect();
        args.push(format!("--user-data-dir={}", user_data_dir.display()));
        let capabilities = serde_json::json!({
            "browserName": "chrome",
            "pageLoadStrategy": "normal",
            "goog:chromeOptions": {
                "binary": config.chromium,
                "args": args,
            },
            // Keeps the page's console messages for `browser_log`.
            "goog:loggingPrefs": { "browser": "ALL" },
        });
        let Some(capabilities) = capabilities.as_object().cloned() else {
            bail!("capabilities are not an object");
        };
        let capabilities: Capabilities = capabilities;
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&driver_url)
            .await
            .with_context(|| {
                format!(
                    "opening a Chromium session through chromedriver; its log:\n{}",
                    tail(&log_path)
                )
            })?;
        browser.client = Some(client);
        Ok(browser)
    }

    /// chromedriver's own log (the last 4,000 characters).
    pub fn driver_log(&self) -> String {
        tail(&self.profile.path().join("chromedriver.log"))
    }

    /// The WebDriver client.
    pub fn client(&self) -> &Client {
        // `client` is set before `start` returns and taken only by `close`, which consumes `self`.
        self.client
            .as_ref()
            .unwrap_or_else(|| unreachable!("Browser without a session"))
    }

    /// The page's console messages since the last call (chromedriver empties its buffer on every read).
    pub async fn log(&self) -> anyhow::Result<Vec<LogEntry>> {
        let value = self
            .client()
            .issue_cmd(DriverPost::browser_log())
            .await
            .context("reading the browser log")?;
        serde_json::from_value(value).context("chromedriver's browser log")
    }

    /// Makes the page see the operating system's dark (or light) colour scheme (`prefers-color-scheme`).
    pub async fn emulate_color_scheme(&self, dark: bool) -> anyhow::Result<()> {
        let value = if dark { "dark" } else { "light" };
        self.client()
            .issue_cmd(DriverPost::dev_tools(
                "Emulation.setEmulatedMedia",
                serde_json::json!({ "features": [{ "name": "prefers-color-scheme", "value": value }] }),
            ))
            .await
            .context("emulating the colour scheme")?;
        Ok(())
    }

    /// Runs `script` in every page the session opens from now on, before the page's own scripts (DevTools'
    /// `Page.addScriptToEvaluateOnNewDocument`; the page's CSP does not apply to it).
    pub async fn run_before_each_page(&self, script: &str) -> anyhow::Result<()> {
        self.client()
            .issue_cmd(DriverPost::dev_tools(
                "Page.addScriptToEvaluateOnNewDocument",
                serde_json::json!({ "source": script }),
            ))
            .await
            .context("adding a script to every new page")?;
        Ok(())
    }

    /// Ends the session (chromedriver quits Chromium), then stops chromedriver.
    pub async fn close(mut self) -> anyhow::Result<()> {
        if let Some(client) = self.client.take() {
            client
                .close()
                .await
                .context("closing the browser session")?;
        }
        Ok(())
        // Drop stops chromedriver and anything left of its process group.
    }
}

impl Drop for Browser {
    #[allow(unsafe_code)] // kill(2) of the driver's process group; see the SAFETY comment.
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Ok(group) = libc::pid_t::try_from(self.driver.id()) {
            // SAFETY: kill(2) with a negative pid signals the process group chromedriver leads (it was started
            // with process_group(0)); no memory is involved.
            unsafe {
                libc::kill(-group, libc::SIGKILL);
            }
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// The last 4,000 characters of a log file.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let skip = text.chars().count().saturating_sub(4000);
    text.chars().skip(skip).collect()
}

/// Starts chromedriver in a process group of its own on a free port; returns it and its URL once it answers.
/// The port may be taken between probing and chromedriver binding it; chromedriver then exits and another port
/// is tried.
fn spawn_driver(config: &Config, log_path: &Path) -> anyhow::Result<(Child, String)> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let port = free_port()?;
        let mut command = Command::new(&config.chromedriver);
        command
            .arg(format!("--port={port}"))
            .arg(format!("--log-path={}", log_path.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        let mut driver = command
            .spawn()
            .with_context(|| format!("starting {}", config.chromedriver.display()))?;
        let url = format!("http://127.0.0.1:{port}");
        match wait_for_driver(&mut driver, &url, log_path) {
            Ok(()) => return Ok((driver, url)),
            Err(error) => {
                let _ = driver.kill();
                let _ = driver.wait();
                if attempt >= 3 {
                    return Err(error);
                }
            }
        }
    }
}

fn wait_for_driver(driver: &mut Child, url: &str, log_path: &Path) -> anyhow::Result<()> {
    let deadline = Instant::now() + DRIVER_TIMEOUT;
    loop {
        if let Ok(response) = http::get(&format!("{url}/status"))
            && response.status == 200
        {
            return Ok(());
        }
        if let Some(status) = driver.try_wait()? {
            bail!(
                "chromedriver exited ({status}) before answering; its log:\n{}",
                tail(log_path)
            );
        }
        if Instant::now() >= deadline {
            bail!(
                "chromedriver did not answer on {url} within {DRIVER_TIMEOUT:?}; its log:\n{}",
                tail(log_path)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A chromedriver extension command: `POST /session/{id}/<path>` with a JSON body. Two are used: the
/// (pre-W3C, still supported) `se/log` for the `browser` log, and `goog/cdp/execute` for a Chrome DevTools
/// Protocol command.
#[derive(Debug)]
struct DriverPost {
    path: &'static str,
    body: serde_json::Value,
}

impl DriverPost {
    fn browser_log() -> DriverPost {
        DriverPost {
            path: "se/log",
            body: serde_json::json!({ "type": "browser" }),
        }
    }

    fn dev_tools(method: &str, params: serde_json::Value) -> DriverPost {
        DriverPost {
            path: "goog/cdp/execute",
            body: serde_json::json!({ "cmd": method, "params": params }),
        }
    }
}

impl WebDriverCompatibleCommand for DriverPost {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/{}",
            session_id.unwrap_or_default(),
            self.path
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (::http::Method, Option<String>) {
        (::http::Method::POST, Some(self.body.to_string()))
    }
}
