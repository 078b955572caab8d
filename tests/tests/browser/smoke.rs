//! Smoke tests: the app loads in a real browser under the server's CSP, and the API answers.

use cellscope_e2e::{Config, Harness, Server};

#[tokio::test]
async fn the_app_loads_and_shows_its_title() -> anyhow::Result<()> {
    let page = Harness::start("smoke").await?;
    page.open("/").await?;
    page.wait_for("main#app").await?;
    // The page's title heading (inside main#app in the placeholder app, in the header beside it in the real one).
    assert_eq!(page.text("h1").await?, "cellscope");
    page.screenshot("smoke").await?;

    let marks = page.performance_marks().await?;
    let names: Vec<&str> = marks.iter().map(|mark| mark.name.as_str()).collect();
    assert!(names.contains(&"cellscope:started"), "marks: {names:?}");
    // The page may fetch the API under its Content-Security-Policy (connect-src 'self').
    let status: u16 = page
        .eval_async("fetch('/api/index').then((response) => response.status)")
        .await?;
    assert_eq!(status, 200);
    // Nothing blocked by the CSP, no failed request, no panic.
    page.assert_no_console_errors().await?;
    page.close().await
}

#[tokio::test]
async fn the_api_and_the_bundle_are_served() -> anyhow::Result<()> {
    let server = Server::start(&Config::from_env()?)?;
    let index = server.get("/api/index")?;
    assert_eq!(index.status, 200);
    assert!(
        index.json()?.get("runs").is_some(),
        "no runs in {}",
        index.text()
    );

    let page = server.get("/")?;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("cache-control"), Some("no-cache"));
    let html = page.text();
    // The boot module is content-hashed, so the server lets browsers keep it for a year.
    let boot = html
        .split("<script type=\"module\" src=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no boot module in {html}"));
    let module = server.get(boot)?;
    assert_eq!(module.status, 200);
    assert_eq!(
        module.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    assert!(
        module
            .text()
            .contains("init({ module_or_path: '/cellscope-")
    );
    // An app route (no extension) falls back to the page.
    assert_eq!(server.get("/some/view")?.status, 200);
    Ok(())
}
