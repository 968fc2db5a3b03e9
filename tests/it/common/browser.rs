//! A headless Chromium driven over the DevTools protocol (JSON commands
//! on a WebSocket), for the tests that look at mcfed's pages in a real
//! browser: open a page, wait for something to show, type, read the DOM,
//! take a screenshot, and collect every console error, uncaught exception
//! and failed load the page causes.
//!
//! Why the protocol itself rather than chromiumoxide or fantoccini: it is
//! a few commands over one WebSocket (tungstenite, small and synchronous),
//! needs no chromedriver whose version must match the browser's, and its
//! console and exception events are first-class, which WebDriver's are not.

#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead as _, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// How long one protocol command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// The browser to use: `MCFED_CHROMIUM`, else the first of Chromium's
/// usual names on the `PATH`.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MCFED_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in [
            "chromium",
            "chromium-browser",
            "google-chrome",
            "google-chrome-stable",
            "chrome",
        ] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// Whether a missing browser fails the test rather than skipping it: in CI
/// (`CI` set, as CI services and `.ci/run` do) or with
/// `MCFED_REQUIRE_BROWSER=1`.
pub fn browser_required() -> bool {
    let set = |name: &str| {
        std::env::var(name).is_ok_and(|value| !value.is_empty() && value != "0" && value != "false")
    };
    set("MCFED_REQUIRE_BROWSER") || set("CI")
}

/// The browser, or `None` after saying why the test is skipped; panics
/// when none is found but one is required.
pub fn chromium_or_skip(test: &str) -> Option<PathBuf> {
    match find_chromium() {
        Some(path) => Some(path),
        None if browser_required() => panic!(
            "{test}: no Chromium found (install it — `apt-get install chromium` — or set \
             MCFED_CHROMIUM), and CI / MCFED_REQUIRE_BROWSER say the browser tests must run"
        ),
        None => {
            eprintln!(
                "SKIPPED {test}: no Chromium on this machine (apt-get install chromium, or set \
                 MCFED_CHROMIUM); in CI this is a failure"
            );
            None
        }
    }
}

/// A headless Chromium with one page, closed when dropped.
pub struct Browser {
    child: Child,
    socket: WebSocket<MaybeTlsStream<TcpStream>>,
    session: String,
    next_id: u64,
    problems: Vec<String>,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts `chromium` headless with a fresh profile and opens a blank
    /// page of `width` × `height` CSS pixels.
    pub fn start(chromium: &Path, width: u32, height: u32) -> Browser {
        let profile = tempfile::tempdir().expect("a profile directory");
        let mut child = Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
                &format!("--user-data-dir={}", profile.path().display()),
                "about:blank",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {}: {error}", chromium.display()));
        // Chromium says where its protocol listens on standard error; the
        // rest of what it says is read and dropped so it never blocks.
        let stderr = child.stderr.take().expect("piped stderr");
        let (tell, told) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("ws://") {
                    let _ = tell.send(line[at..].trim().to_owned());
                }
            }
        });
        let url = match told.recv_timeout(Duration::from_secs(60)) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                panic!("Chromium did not say where its DevTools protocol listens");
            }
        };
        let (socket, _) = tungstenite::connect(url.as_str())
            .unwrap_or_else(|error| panic!("cannot reach Chromium at {url}: {error}"));
        if let MaybeTlsStream::Plain(stream) = socket.get_ref() {
            stream
                .set_read_timeout(Some(COMMAND_TIMEOUT))
                .expect("read timeout");
        }
        let mut browser = Browser {
            child,
            socket,
            session: String::new(),
            next_id: 0,
            problems: Vec::new(),
            _profile: profile,
        };
        let target = browser.call("Target.createTarget", json!({ "url": "about:blank" }));
        let target = target["targetId"].as_str().expect("a target id").to_owned();
        let attached = browser.call(
            "Target.attachToTarget",
            json!({ "targetId": target, "flatten": true }),
        );
        browser.session = attached["sessionId"]
            .as_str()
            .expect("a session id")
            .to_owned();
        for domain in ["Runtime.enable", "Log.enable", "Page.enable"] {
            browser.call(domain, json!({}));
        }
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
        );
        browser
    }

    /// Sends one command (to the page, once attached) and returns its
    /// result, noting the events that come meanwhile.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut command = json!({ "id": id, "method": method, "params": params });
        if !self.session.is_empty() {
            command["sessionId"] = json!(self.session);
        }
        self.socket
            .send(Message::text(command.to_string()))
            .unwrap_or_else(|error| panic!("{method}: cannot send: {error}"));
        let deadline = Instant::now() + COMMAND_TIMEOUT;
        loop {
            assert!(Instant::now() < deadline, "{method}: no answer");
            let message = self
                .socket
                .read()
                .unwrap_or_else(|error| panic!("{method}: no answer: {error}"));
            let Message::Text(text) = message else {
                continue;
            };
            let value: Value = serde_json::from_str(text.as_str()).expect("protocol JSON");
            if value["id"].as_u64() == Some(id) {
                if let Some(error) = value.get("error") {
                    panic!("{method} failed: {error}");
                }
                return value["result"].clone();
            }
            self.note(&value);
        }
    }

    /// Keeps what an event says went wrong in the page.
    fn note(&mut self, event: &Value) {
        let params = &event["params"];
        match event["method"].as_str().unwrap_or_default() {
            "Runtime.consoleAPICalled"
                if matches!(params["type"].as_str(), Some("error" | "assert")) =>
            {
                let args: Vec<String> = params["args"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|arg| {
                        arg["value"]
                            .as_str()
                            .map(str::to_owned)
                            .unwrap_or_else(|| arg["description"].to_string())
                    })
                    .collect();
                self.problems
                    .push(format!("console.error: {}", args.join(" ")));
            }
            "Runtime.exceptionThrown" => {
                let details = &params["exceptionDetails"];
                self.problems.push(format!(
                    "uncaught: {} {}",
                    details["text"], details["exception"]["description"]
                ));
            }
            "Log.entryAdded" if params["entry"]["level"] == "error" => {
                self.problems.push(format!(
                    "log: {} ({})",
                    params["entry"]["text"], params["entry"]["url"]
                ));
            }
            "Inspector.targetCrashed" => self.problems.push("the page crashed".to_owned()),
            _ => {}
        }
    }

    /// Opens `url` in the page.
    pub fn open(&mut self, url: &str) {
        let answer = self.call("Page.navigate", json!({ "url": url }));
        assert!(
            answer.get("errorText").is_none(),
            "cannot open {url}: {answer}"
        );
    }

    /// Evaluates `expression` in the page (awaiting a promise) and returns
    /// its value.
    pub fn eval(&mut self, expression: &str) -> Value {
        let answer = self.call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        );
        if let Some(details) = answer.get("exceptionDetails") {
            panic!("`{expression}` threw: {details}");
        }
        answer["result"]["value"].clone()
    }

    /// Waits until `expression` is true in the page, at most `limit`, and
    /// says how long it took.
    pub fn wait_for(&mut self, what: &str, expression: &str, limit: Duration) -> Duration {
        let started = Instant::now();
        loop {
            if self.eval(expression) == Value::Bool(true) {
                return started.elapsed();
            }
            assert!(
                started.elapsed() < limit,
                "{what}: not within {limit:?} (`{expression}`)"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Types `text` into the element `selector` finds, as a user would.
    pub fn type_into(&mut self, selector: &str, text: &str) {
        let found = self.eval(&format!(
            "(() => {{ const e = document.querySelector({selector:?}); if (!e) return false; e.focus(); return document.activeElement === e; }})()"
        ));
        assert_eq!(found, Value::Bool(true), "no {selector} to type into");
        self.call("Input.insertText", json!({ "text": text }));
    }

    /// Takes a PNG of the page, as tall as its content (at most
    /// `max_height` pixels), and writes it to `path`.
    pub fn screenshot(&mut self, path: &Path, width: u32, max_height: u32) {
        let height = self
            .eval("document.documentElement.scrollHeight")
            .as_u64()
            .unwrap_or(1000)
            .min(u64::from(max_height));
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
        );
        let shot = self.call("Page.captureScreenshot", json!({ "format": "png" }));
        let data = shot["data"].as_str().expect("PNG data");
        use base64::Engine as _;
        let png = base64::engine::general_purpose::STANDARD
            .decode(data)
            .expect("base64 PNG");
        assert!(png.starts_with(b"\x89PNG"), "not a PNG");
        std::fs::write(path, png).expect("write the screenshot");
    }

    /// Everything that went wrong in the page since the last call
    /// (console errors, uncaught exceptions, failed loads).
    pub fn problems(&mut self) -> Vec<String> {
        // A round trip reads the events queued before it.
        self.eval("0");
        std::mem::take(&mut self.problems)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.socket.close(None);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
