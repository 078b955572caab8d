//! [`Harness`]: one server and one browser for one test, with waits that explain themselves when they time out.

use crate::browser::{Browser, LogEntry};
use crate::config::Config;
use crate::http::HttpResponse;
use crate::server::Server;
use anyhow::{Context, bail};
use fantoccini::elements::Element;
use fantoccini::key::Key;
use fantoccini::{Client, Locator};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::OwnedMutexGuard;

/// One browser test at a time, however many test threads run: each starts its own server and Chromium, and two
/// of those on two cores make timings (and waits with timeouts) flaky. Holding this instead of asking for
/// `--test-threads=1` lets the browser tests run in the same `cargo test --workspace` as every other test.
fn one_at_a_time() -> Arc<tokio::sync::Mutex<()>> {
    static LOCK: OnceLock<Arc<tokio::sync::Mutex<()>>> = OnceLock::new();
    LOCK.get_or_init(|| Arc::new(tokio::sync::Mutex::new(())))
        .clone()
}

/// How long the waits without `_within` wait.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How often a wait looks again: often enough not to slow tests down, rare enough not to load the browser.
const POLL: Duration = Duration::from_millis(50);

/// The boot module (see `cargo xtask build-web`) sets this mark once the WASM app has started, or this data
/// attribute when it could not.
const STARTED: &str = "performance.getEntriesByName('cellscope:started').length > 0 \
     || document.documentElement.dataset.bootError !== undefined";

/// A `performance.mark()` of the page.
#[derive(Clone, Debug, Deserialize)]
pub struct Mark {
    pub name: String,
    /// Milliseconds since navigation start (`performance.timeOrigin`).
    pub start_ms: f64,
}

pub struct Harness {
    name: String,
    config: Config,
    // Field order is drop order: the browser goes before the server it talks to.
    browser: Browser,
    server: Server,
    /// Console messages read so far (chromedriver hands each out only once).
    console: Mutex<Vec<LogEntry>>,
    /// Held for the test's lifetime (see [`one_at_a_time`]); dropped last.
    _turn: OwnedMutexGuard<()>,
}

impl Harness {
    /// Starts a server on the data and a browser session. `name` prefixes the screenshot taken when a wait fails.
    pub async fn start(name: &str) -> anyhow::Result<Self> {
        Harness::start_serving(name, None).await
    }

    /// Like [`Harness::start`], on a data root of the test's own (a copy it may change).
    pub async fn start_on(name: &str, data: &std::path::Path) -> anyhow::Result<Self> {
        Harness::start_serving(name, Some(data)).await
    }

    async fn start_serving(name: &str, data: Option<&std::path::Path>) -> anyhow::Result<Self> {
        let mut config = Config::from_env()?;
        if let Some(data) = data {
            config.data = data.to_path_buf();
        }
        let turn = one_at_a_time().lock_owned().await;
        // The server indexes while Chromium starts (about 0.3 s and 0.5 s): neither needs the other yet.
        let server_config = config.clone();
        let server = tokio::task::spawn_blocking(move || Server::start(&server_config));
        let browser = Browser::start(&config).await;
        let server = server.await.context("the task starting the server")??;
        let browser = browser?;
        Ok(Self {
            name: name.to_string(),
            config,
            browser,
            server,
            console: Mutex::new(Vec::new()),
            _turn: turn,
        })
    }

    /// Captures what the page hands to the browser as downloads instead of saving them: the blobs in
    /// `window.__blobs`, the file names in `window.__names` and the addresses in `window.__hrefs`, in order.
    pub async fn capture_downloads(&self) -> anyhow::Result<()> {
        self.eval::<bool>(
            "(() => { window.__blobs = []; window.__names = []; \
             const original = URL.createObjectURL; URL.createObjectURL = (blob) => { window.__blobs.push(blob); return original(blob); }; \
             window.__hrefs = []; \
             HTMLAnchorElement.prototype.click = function () { window.__names.push(this.download); window.__hrefs.push(this.href); }; \
             return true; })()",
        )
        .await?;
        Ok(())
    }

    /// Makes the page see a dark (or light) operating-system colour scheme.
    pub async fn emulate_dark_mode(&self, dark: bool) -> anyhow::Result<()> {
        self.browser.emulate_color_scheme(dark).await
    }

    /// Runs `script` in every page opened from now on, before the app starts (see
    /// [`Browser::run_before_each_page`]): a test can hold back a response with it.
    pub async fn run_before_each_page(&self, script: &str) -> anyhow::Result<()> {
        self.browser.run_before_each_page(script).await
    }

    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The WebDriver client, for everything the harness does not wrap (clicks, keys, history, windows).
    pub fn client(&self) -> &Client {
        self.browser.client()
    }

    /// The server's URL for `path` (with query), e.g. `/?view=curves`.
    pub fn url(&self, path: &str) -> String {
        self.server.url(path)
    }

    /// `GET path` straight to the server, without the browser.
    pub fn get(&self, path: &str) -> anyhow::Result<HttpResponse> {
        self.server.get(path)
    }

    /// Stops the server: what the browser does next has no server to talk to.
    pub fn stop_server(&mut self) {
        self.server.stop();
    }

    /// Navigates to `path` and waits until the app has started; fails with the boot error if it could not.
    pub async fn open(&self, path: &str) -> anyhow::Result<()> {
        self.open_url(&self.url(path)).await
    }

    /// Navigates to an absolute `url` (such as a `file://` page) and waits until the app has started.
    pub async fn open_url(&self, url: &str) -> anyhow::Result<()> {
        let url = url.to_string();
        self.client()
            .goto(&url)
            .await
            .with_context(|| format!("navigating to {url}"))?;
        self.wait_until("the app to start", STARTED, DEFAULT_TIMEOUT)
            .await?;
        let boot_error: Option<String> = self
            .eval("document.documentElement.dataset.bootError ?? null")
            .await?;
        if let Some(error) = boot_error {
            return Err(self
                .failure(format!("the app failed to start: {error}"))
                .await);
        }
        Ok(())
    }

    /// Waits until the JS expression `condition` is truthy; `what` names it in the error.
    pub async fn wait_until(
        &self,
        what: &str,
        condition: &str,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        let script = format!("!!({condition})");
        loop {
            if self.eval::<bool>(&script).await? {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(self
                    .failure(format!(
                        "timed out after {timeout:?} waiting for {what} (`{condition}`)"
                    ))
                    .await);
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits up to [`DEFAULT_TIMEOUT`] until `css` matches an element and returns the first.
    /// Waits until the JavaScript `condition` holds (the condition is its own description).
    pub async fn until(&self, condition: &str) -> anyhow::Result<()> {
        self.wait_until(condition, condition, DEFAULT_TIMEOUT).await
    }

    /// Waits until the app has its details (provenance, pre-refill cells; the `details-loaded` mark): after them
    /// nothing more arrives for the snapshot shown, so a pointer event sent now is not raced by a redraw. Up to a
    /// minute: the details of the `--scale 34` root take seconds.
    pub async fn wait_for_details(&self) -> anyhow::Result<()> {
        self.wait_until(
            "the details to load",
            "performance.getEntriesByName('details-loaded').length > 0",
            Duration::from_secs(60),
        )
        .await
    }

    /// How many elements match `css`.
    pub async fn count(&self, css: &str) -> anyhow::Result<u64> {
        self.eval(&format!("document.querySelectorAll({css:?}).length"))
            .await
    }

    pub async fn wait_for(&self, css: &str) -> anyhow::Result<Element> {
        self.wait_for_within(css, DEFAULT_TIMEOUT).await
    }

    pub async fn wait_for_within(&self, css: &str, timeout: Duration) -> anyhow::Result<Element> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.client().find(Locator::Css(css)).await {
                Ok(element) => return Ok(element),
                Err(error) if error.is_no_such_element() => {}
                Err(error) => return Err(error).with_context(|| format!("finding `{css}`")),
            }
            if Instant::now() >= deadline {
                return Err(self
                    .failure(format!("timed out after {timeout:?} waiting for `{css}`"))
                    .await);
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits up to [`DEFAULT_TIMEOUT`] until the first element matching `css` has attribute `name` = `value`.
    pub async fn wait_for_attr(&self, css: &str, name: &str, value: &str) -> anyhow::Result<()> {
        self.wait_for_attr_within(css, name, value, DEFAULT_TIMEOUT)
            .await
    }

    pub async fn wait_for_attr_within(
        &self,
        css: &str,
        name: &str,
        value: &str,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        let mut last = None;
        loop {
            match self.client().find(Locator::Css(css)).await {
                Ok(element) => match element.attr(name).await {
                    Ok(Some(now)) if now == value => return Ok(()),
                    Ok(now) => last = Some(now),
                    // The app re-rendered the element between find and read: look again.
                    Err(error) if error.is_stale_element_reference() => {}
                    Err(error) => {
                        return Err(error).with_context(|| format!("reading {name} of `{css}`"));
                    }
                },
                Err(error) if error.is_no_such_element() => {}
                Err(error) => return Err(error).with_context(|| format!("finding `{css}`")),
            }
            if Instant::now() >= deadline {
                let seen = match last {
                    None => "no such element".to_string(),
                    Some(None) => format!("no {name} attribute"),
                    Some(Some(now)) => format!("{name}={now:?}"),
                };
                return Err(self
                    .failure(format!(
                        "timed out after {timeout:?} waiting for `{css}` to have {name}={value:?} (last seen: {seen})"
                    ))
                    .await);
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits up to [`DEFAULT_TIMEOUT`] until the first element matching `css` has the text `text` (trimmed).
    pub async fn wait_for_text(&self, css: &str, text: &str) -> anyhow::Result<()> {
        self.wait_for_text_within(css, text, DEFAULT_TIMEOUT).await
    }

    pub async fn wait_for_text_within(
        &self,
        css: &str,
        text: &str,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let condition = format!(
            "document.querySelector({0})?.textContent.trim() === {1}",
            serde_json::to_string(css)?,
            serde_json::to_string(text)?
        );
        self.wait_until(&format!("`{css}` to read {text:?}"), &condition, timeout)
            .await
    }

    /// Clicks the first element matching `css`, which must be on the page already (no waiting).
    pub async fn click(&self, css: &str) -> anyhow::Result<()> {
        let deadline = Instant::now() + DEFAULT_TIMEOUT;
        loop {
            let element = self
                .client()
                .find(Locator::Css(css))
                .await
                .with_context(|| format!("finding `{css}` to click it"))?;
            match element.click().await {
                Ok(_) => return Ok(()),
                // The app re-rendered the element between find and click: click the one on the page now.
                Err(error) if error.is_stale_element_reference() && Instant::now() < deadline => {}
                Err(error) => return Err(error).with_context(|| format!("clicking `{css}`")),
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Focuses the first element matching `css` and presses `key` there, as a keyboard user who has reached it.
    /// The app may re-render the element between the focus and the press (a later indexing stage arriving), which
    /// makes the press "not interactable": then the new element is focused and the key pressed again, up to five
    /// times.
    pub async fn press_on(&self, css: &str, key: Key) -> anyhow::Result<()> {
        let focus = format!(
            "(() => {{ const element = document.querySelector({}); if (!element) return false; \
             element.focus(); return true; }})()",
            serde_json::to_string(css)?
        );
        let mut attempts = 0;
        loop {
            if !self.eval::<bool>(&focus).await? {
                bail!("no `{css}` on the page to focus");
            }
            match self.press(key).await {
                Ok(()) => return Ok(()),
                Err(error) if attempts < 5 => {
                    attempts += 1;
                    eprintln!("a key press on `{css}` was refused ({error:#}); focusing again");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(error) => return Err(error.context(format!("on `{css}`"))),
            }
        }
    }

    /// Presses `key` on the element that has the focus (where a Tab moved it, say).
    pub async fn press(&self, key: Key) -> anyhow::Result<()> {
        self.client()
            .active_element()
            .await?
            .send_keys(&key.to_string())
            .await
            .context("pressing a key on the focused element")
    }

    /// The trimmed text of the first element matching `css` (waiting for it first).
    pub async fn text(&self, css: &str) -> anyhow::Result<String> {
        let deadline = Instant::now() + DEFAULT_TIMEOUT;
        loop {
            let element = self.wait_for(css).await?;
            match element.text().await {
                Ok(text) => return Ok(text.trim().to_string()),
                // The app re-rendered the element between find and read (a table row replaced when a later
                // effect settles): read the one on the page now.
                Err(error) if error.is_stale_element_reference() && Instant::now() < deadline => {}
                Err(error) => {
                    return Err(error).with_context(|| format!("reading the text of `{css}`"));
                }
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Evaluates the JS expression `expression` in the page and deserialises its value.
    pub async fn eval<T: DeserializeOwned>(&self, expression: &str) -> anyhow::Result<T> {
        let value = self
            .client()
            .execute(&format!("return ({expression});"), Vec::new())
            .await
            .with_context(|| format!("evaluating `{expression}`"))?;
        serde_json::from_value(value.clone())
            .with_context(|| format!("`{expression}` gave {value}"))
    }

    /// Evaluates `expression`, which may yield a promise, and deserialises what it resolves to.
    pub async fn eval_async<T: DeserializeOwned>(&self, expression: &str) -> anyhow::Result<T> {
        let script = format!(
            "const done = arguments[arguments.length - 1];\n\
             Promise.resolve().then(() => ({expression})).then(\n\
             \x20 (value) => done({{ ok: value === undefined ? null : value }}),\n\
             \x20 (error) => done({{ error: String((error && error.stack) || error) }}),\n\
             );"
        );
        let value = self
            .client()
            .execute_async(&script, Vec::new())
            .await
            .with_context(|| format!("evaluating `{expression}`"))?;
        if let Some(error) = value.get("error") {
            bail!("`{expression}` failed: {error}");
        }
        let ok = value.get("ok").cloned().unwrap_or_default();
        serde_json::from_value(ok.clone()).with_context(|| format!("`{expression}` gave {ok}"))
    }

    /// Saves a PNG of the viewport as `<screenshots>/<name>.png` and returns its path.
    pub async fn screenshot(&self, name: &str) -> anyhow::Result<PathBuf> {
        let png = self
            .client()
            .screenshot()
            .await
            .context("taking a screenshot")?;
        std::fs::create_dir_all(&self.config.screenshots)
            .with_context(|| format!("creating {}", self.config.screenshots.display()))?;
        let path = self.config.screenshots.join(format!("{name}.png"));
        std::fs::write(&path, png).with_context(|| format!("writing {}", path.display()))?;
        Ok(path)
    }

    /// Saves the `index`-th captured download that the page handed over as a `data:` address (the PNG exports;
    /// see [`Harness::capture_downloads`]) as `<screenshots>/<name>` and returns its bytes, so a test can read an
    /// exported file back and a reader can look at it.
    pub async fn save_download(&self, index: usize, name: &str) -> anyhow::Result<Vec<u8>> {
        // A base64 `data:` address, decoded in the page (the page's content policy does not let it fetch one).
        let bytes: Vec<u8> = self
            .eval(&format!(
                "(() => {{ const href = window.__hrefs[{index}]; const text = atob(href.slice(href.indexOf(',') + 1)); \
                 return Array.from(text, c => c.charCodeAt(0)); }})()"
            ))
            .await?;
        std::fs::create_dir_all(&self.config.screenshots)
            .with_context(|| format!("creating {}", self.config.screenshots.display()))?;
        let path = self.config.screenshots.join(name);
        std::fs::write(&path, &bytes).with_context(|| format!("writing {}", path.display()))?;
        Ok(bytes)
    }

    /// The page's `performance.mark()`s, in order.
    pub async fn performance_marks(&self) -> anyhow::Result<Vec<Mark>> {
        self.eval(
            "performance.getEntriesByType('mark').map((mark) => ({ name: mark.name, start_ms: mark.startTime }))",
        )
        .await
    }

    /// Every console message of the browser since the session started.
    pub async fn browser_log(&self) -> anyhow::Result<Vec<LogEntry>> {
        let fresh = self.browser.log().await?;
        let mut console = self
            .console
            .lock()
            .map_err(|_| anyhow::anyhow!("console log lock poisoned"))?;
        console.extend(fresh);
        Ok(console.clone())
    }

    /// Fails when the console has any error so far: uncaught exceptions, failed requests (a 404 is one), CSP
    /// violations.
    pub async fn assert_no_console_errors(&self) -> anyhow::Result<()> {
        let errors: Vec<String> = self
            .browser_log()
            .await?
            .into_iter()
            .filter(|entry| entry.level == "SEVERE")
            .map(|entry| entry.message)
            .collect();
        if !errors.is_empty() {
            bail!("console errors:\n  {}", errors.join("\n  "));
        }
        Ok(())
    }

    /// Ends the browser session, then stops chromedriver and the server.
    pub async fn close(self) -> anyhow::Result<()> {
        let Self {
            browser, server, ..
        } = self;
        browser.close().await?;
        drop(server);
        Ok(())
    }

    /// An error for `what` with everything needed to see why: URL, page HTML, console, server log and a
    /// screenshot (`<name>-failure.png`). Collecting the evidence must not hide the failure, so its own errors
    /// are reported inline.
    async fn failure(&self, what: String) -> anyhow::Error {
        let url = match self.client().current_url().await {
            Ok(url) => url.to_string(),
            Err(error) => format!("(unknown: {error})"),
        };
        let html = match self.client().source().await {
            Ok(html) if html.chars().count() > 3000 => {
                format!("{}…", html.chars().take(3000).collect::<String>())
            }
            Ok(html) => html,
            Err(error) => format!("(unavailable: {error})"),
        };
        let console = match self.browser_log().await {
            Ok(entries) if entries.is_empty() => "  (nothing)".to_string(),
            Ok(entries) => entries
                .iter()
                .map(|entry| format!("  {} {}", entry.level, entry.message))
                .collect::<Vec<_>>()
                .join("\n"),
            Err(error) => format!("  (unavailable: {error:#})"),
        };
        let screenshot = match self.screenshot(&format!("{}-failure", self.name)).await {
            Ok(path) => path.display().to_string(),
            Err(error) => format!("(failed: {error:#})"),
        };
        let log = self.server.log();
        let tail: Vec<&str> = log.lines().rev().take(20).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        anyhow::anyhow!(
            "{what}\nurl: {url}\nscreenshot: {screenshot}\nconsole:\n{console}\npage:\n{html}\nserver log (last lines):\n{}",
            tail.join("\n")
        )
    }
}
