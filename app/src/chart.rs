//! The charts on the page: the canvas they are drawn on (`canvas`), the width they follow, the point under the
//! mouse and the PNG export. What is drawn comes from `cellscope_draw::chart`, which any backend can draw.

use cellscope_draw::chart::Hit;
use plotters::coord::Shift;
use plotters::prelude::*;

pub(crate) mod canvas;
pub(crate) mod surface;

pub(crate) use surface::Surface;

/// The area every chart of the app is drawn on.
pub(crate) type Area<'a> = DrawingArea<Surface<'a>, Shift>;

/// Bounds of a chart's width in CSS pixels: narrower is unreadable, wider wastes the screen.
const MIN_WIDTH: f64 = 480.0;
const MAX_WIDTH: f64 = 2400.0;

/// The width a chart can take: the client width of the element `container_id`, within bounds, or `default`
/// before the page has been laid out.
pub(crate) fn available_width(container_id: &str, default: f64) -> f64 {
    crate::browser::window()
        .and_then(|window| window.document())
        .and_then(|document| document.get_element_by_id(container_id))
        .map(|area| f64::from(area.client_width()))
        .filter(|width| *width > 0.0)
        .map_or(default, |width| width.clamp(MIN_WIDTH, MAX_WIDTH))
}

/// A signal holding the width of `container_id` in CSS pixels: `0.0` until the first drawing measures it (see
/// [`width_to_draw`]), then set again whenever the container's size changes by a pixel or more (a window resize,
/// a scrollbar coming or going), so that a chart that tracks it follows. A `ResizeObserver` reports the change
/// after the browser's own layout, where reading the width costs nothing; a drawing that read it itself in the
/// middle of an update made the browser lay the page out there and again for the frame (the largest part of a
/// curves repaint). The observer goes with the view.
pub(crate) fn follow_width(
    container_id: &'static str,
    default: f64,
) -> leptos::prelude::RwSignal<f64> {
    use leptos::prelude::*;
    use wasm_bindgen::JsCast;
    let width = RwSignal::new(0.0);
    let resized = wasm_bindgen::closure::Closure::<dyn FnMut()>::new(move || {
        let now = available_width(container_id, default);
        if (now - width.get_untracked()).abs() >= 1.0 {
            width.set(now);
        }
    });
    let observer = web_sys::ResizeObserver::new(resized.as_ref().unchecked_ref()).ok();
    let kept = StoredValue::new_local((observer, resized));
    // Effects run once the view is mounted, when the container exists.
    Effect::new(move |_| {
        kept.with_value(|(observer, _)| {
            let container = crate::browser::window()
                .and_then(|window| window.document())
                .and_then(|document| document.get_element_by_id(container_id));
            if let (Some(observer), Some(container)) = (observer, container) {
                observer.observe(&container);
            }
        });
    });
    on_cleanup(move || {
        kept.with_value(|(observer, _)| {
            if let Some(observer) = observer {
                observer.disconnect();
            }
        });
    });
    width
}

/// The width to draw at: the one `width` follows, or, before anything was measured, the container's width now
/// (kept in `width`, so the observer's first report of the same width draws nothing again).
pub(crate) fn width_to_draw(
    width: leptos::prelude::RwSignal<f64>,
    container_id: &str,
    default: f64,
) -> f64 {
    use leptos::prelude::*;
    let known = width.get_untracked();
    if known > 0.0 {
        return known;
    }
    let measured = available_width(container_id, default);
    width.update_untracked(|width| *width = measured);
    measured
}

/// Sizes `canvas` to `width` × `height` CSS pixels at the page's pixel density and draws on it.
pub(crate) fn draw_on_canvas(
    canvas: web_sys::HtmlCanvasElement,
    width: f64,
    height: f64,
    draw: impl FnOnce(&Area<'static>, f64) -> Result<Vec<Hit>, String>,
) -> Result<Vec<Hit>, String> {
    let scale = crate::browser::device_pixel_ratio();
    canvas.set_width((width * scale) as u32);
    canvas.set_height((height * scale) as u32);
    let _ = canvas.set_attribute("style", &format!("width:{width}px;height:{height}px"));
    let surface = Surface::canvas(canvas).ok_or("the canvas has no 2D context")?;
    draw(&surface.into_drawing_area(), scale)
}

/// The drawn point nearest the mouse on `canvas`, within 14 CSS pixels.
pub(crate) fn nearest_hit(
    canvas: &web_sys::HtmlCanvasElement,
    hits: &[Hit],
    event: &web_sys::MouseEvent,
) -> Option<Hit> {
    let rect = canvas.get_bounding_client_rect();
    let (x, y) = (
        f64::from(event.client_x()) - rect.left(),
        f64::from(event.client_y()) - rect.top(),
    );
    hits.iter()
        .map(|hit| ((hit.x - x).powi(2) + (hit.y - y).powi(2), hit))
        .filter(|(distance, _)| *distance < 14.0 * 14.0)
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, hit)| hit.clone())
}

/// A PNG export: `draw` on a fresh canvas of `width` × `height` CSS pixels at twice the page's pixel density (at
/// least), as a data URL to download.
pub(crate) fn png_data_url(
    width: f64,
    height: f64,
    draw: impl FnOnce(&Area<'static>, f64) -> Result<Vec<Hit>, String>,
) -> Option<String> {
    use wasm_bindgen::JsCast;
    let scale = crate::browser::device_pixel_ratio().max(2.0);
    let canvas = crate::browser::window()?
        .document()?
        .create_element("canvas")
        .ok()?
        .dyn_into::<web_sys::HtmlCanvasElement>()
        .ok()?;
    canvas.set_width((width * scale) as u32);
    canvas.set_height((height * scale) as u32);
    let root = Surface::canvas(canvas.clone())?.into_drawing_area();
    draw(&root, scale).ok()?;
    // The backend gathers strokes and fills into paths: draw what is still gathered before reading the pixels.
    root.present().ok()?;
    canvas.to_data_url().ok()
}

/// Moves `tooltip`, shown for the point at `point` (CSS pixels on `canvas`), to where
/// [`cellscope_draw::chart::tooltip_position`] puts it inside the canvas's box, from the tooltip's size as laid
/// out. The tooltip and the canvas share their positioned parent.
pub(crate) fn place_tooltip(
    tooltip: &web_sys::HtmlElement,
    canvas: &web_sys::HtmlElement,
    point: (f64, f64),
) {
    // Laid out first at the top left, where its width is not cut short by the space right of its old place.
    let _ = tooltip.set_attribute("style", "left:0px;top:0px");
    let size = (
        f64::from(tooltip.offset_width()),
        f64::from(tooltip.offset_height()),
    );
    let area = (
        f64::from(canvas.offset_width()),
        f64::from(canvas.offset_height()),
    );
    let (left, top) = cellscope_draw::chart::tooltip_position(point, size, area);
    let _ = tooltip.set_attribute("style", &format!("left:{left}px;top:{top}px"));
}
