// The browser half of tests/e2e/test_phone_layout.py: the page's scroll width against the
// viewport, and every visible tap target under 44 px (see the test module for the rule).
// `options.runningText` (a CSS selector, optional): only a link whose text block matches it
// counts as running text (tests/e2e/test_mobile_first.py narrows the exception to <p>).
async (options) => {
  // maps/map-loader.js builds a map near the viewport after the page loads, in steps: measure
  // once those maps are whole (half built, a map's attribution is a lone "Leaflet" link). A map
  // whose building began counts wherever it is now: the page's late blocks may have pushed it
  // out of the near band after the loader saw it there.
  const until = Date.now() + 15000;
  const building = () =>
    document.querySelector("[data-map-building]:not([data-map-ready])") !== null ||
    [...document.querySelectorAll("[data-map-var]")].some((frame) => {
      const box = frame.getBoundingClientRect();
      const near = box.height > 0 && box.bottom > -200 && box.top < window.innerHeight + 200;
      return near && !frame.querySelector("[data-map-ready]");
    });
  while (building() && Date.now() < until) await new Promise((wake) => setTimeout(wake, 50));
  const MIN = 44;
  const runningText = (options || {}).runningText || null;
  const out = { scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, small: [], wide: [] };
  function visible(el) {
    if (el.closest("[hidden], template")) return false;
    const cs = getComputedStyle(el);
    if (cs.display === "none" || cs.visibility === "hidden" || parseFloat(cs.opacity) === 0) return false;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return false;
    // off-screen by design (skip link until focused, visually-hidden)
    if (r.right + window.scrollX <= 0 || r.bottom + window.scrollY <= 0) return false;
    if (r.width <= 1 && r.height <= 1) return false;
    return true;
  }
  function inRunningText(a) {
    if (getComputedStyle(a).display !== "inline") return false;
    let block = a.parentElement;
    while (block && getComputedStyle(block).display.startsWith("inline")) block = block.parentElement;
    if (!block) return false;
    const own = (a.textContent || "").replace(/\s+/g, "");
    if (runningText) {
      // Running text is the block's own words: not those of its buttons, links or fields.
      if (!block.matches(runningText)) return false;
      const copy = block.cloneNode(true);
      copy.querySelectorAll("a, button, input, select, textarea, label, summary").forEach((c) => c.remove());
      return (copy.textContent || "").replace(/\s+/g, "").length > 0;
    }
    const all = (block.textContent || "").replace(/\s+/g, "");
    return all.length > own.length;
  }
  function describe(el) {
    const r = el.getBoundingClientRect();
    let s = el.tagName.toLowerCase();
    if (el.id) s += "#" + el.id;
    if (el.className && typeof el.className === "string") s += "." + el.className.trim().split(/\s+/).join(".");
    const t = (el.textContent || el.value || el.name || "").trim().replace(/\s+/g, " ").slice(0, 40);
    return `${s} "${t}" ${Math.round(r.width)}x${Math.round(r.height)}`;
  }
  const seen = new Set();
  document.querySelectorAll("a[href], button, input, select, textarea, summary, label").forEach((el) => {
    let target = el;
    const tag = el.tagName;
    if (tag === "INPUT") {
      const type = (el.type || "").toLowerCase();
      if (type === "hidden") return;
      if (type === "checkbox" || type === "radio") {
        target = el.closest("label") || (el.id && document.querySelector(`label[for="${el.id}"]`));
        if (!target) target = el;
      }
    } else if (tag === "LABEL") {
      const control = el.control;
      if (!control || !["checkbox", "radio"].includes((control.type || "").toLowerCase())) return;
    } else if (tag === "A" && inRunningText(el)) {
      return;
    }
    // A box squeezed by its label's text (a flex item shrinks) is no target a finger can see.
    if ((el.type === "checkbox" || el.type === "radio") && visible(el)) {
      const box = el.getBoundingClientRect();
      if (box.width < 12 || box.height < 12) out.small.push(describe(el) + " (caixa espremida)");
    }
    if (seen.has(target)) return;
    seen.add(target);
    if (!visible(target) || (target !== el && !visible(el) && el.type !== "checkbox" && el.type !== "radio")) return;
    const r = target.getBoundingClientRect();
    if (r.width < MIN - 0.5 || r.height < MIN - 0.5) out.small.push(describe(target));
  });
  // the widest elements, to find overflow culprits
  if (out.scrollWidth > out.innerWidth) {
    document.querySelectorAll("body *").forEach((el) => {
      const r = el.getBoundingClientRect();
      if (r.right > window.innerWidth + 1 && visible(el)) out.wide.push(describe(el) + " right=" + Math.round(r.right));
    });
    out.wide = out.wide.slice(0, 15);
  }
  return out;
}
