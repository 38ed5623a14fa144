/* What a phone does not see above the fold waits. A page with a map carries
 * no Leaflet <script>; its map's code arrives as CtrMaps.define(name, sources, steps), written
 * by maps.base.render_parts, and runs only when the map's box comes near the viewport: then
 * Leaflet (`sources`, our static files, in order) is loaded, the hooks below are installed, and
 * the map is built one folium element per task (`steps` is a generator that yields between
 * them), so no single long task holds the page. The page's own scripts reach the map through
 * CtrMaps.whenMap(frame, callback) or the "ctr:map-ready" event on document.
 * Without JavaScript nothing of this runs: the forms take typed coordinates. */
(function () {
  "use strict";
  if (window.CtrMaps) {
    return; // a page with two maps carries this file twice
  }

  // Built a little before it shows, so a scroll finds it drawn; not a whole screen ahead, or
  // a phone's form with its map just below the fold would build it at once.
  var NEAR = "200px 0px";
  var PHONE = "(max-width: 640px)";
  var leaflet = null; // a Promise, once Leaflet's files are asked for
  var built = {}; // map name -> L.Map
  var waiting = {}; // map name -> callbacks
  var sources = []; // every file the page's maps will load (the offline app keeps them)

  function nonce() {
    // The inline scripts' nonce (the property; browsers hide the attribute's value).
    var tagged = document.querySelector("script[nonce]");
    return tagged ? tagged.nonce || tagged.getAttribute("nonce") : "";
  }

  /** Leaflet's files in the order given, fetched in parallel (async = false keeps the order
   * of execution), once per page. */
  function loadLeaflet(sources) {
    if (!leaflet) {
      var value = nonce();
      leaflet = Promise.all(
        sources.map(function (src) {
          return new Promise(function (resolve, reject) {
            var tag = document.createElement("script");
            tag.src = src;
            tag.async = false;
            if (value) {
              tag.nonce = value;
            }
            tag.onload = resolve;
            tag.onerror = function () {
              reject(new Error("Não foi possível carregar " + src));
            };
            document.head.appendChild(tag);
          });
        })
      ).then(installHooks);
    }
    return leaflet;
  }

  /** Every map of the site, set before any is made. */
  function installHooks() {
    // On a phone every map's layer list starts collapsed (its button opens it): expanded, it
    // would cover most of a small map. Wider screens keep it open, as a legend.
    L.Control.Layers.addInitHook(function () {
      if (window.matchMedia(PHONE).matches) {
        this.options.collapsed = true;
      }
    });
    // Map popups: Leaflet draws its controls (zoom, layer list) above every popup (they sit in
    // separate stacking contexts), so a popup must not open under them. Each popup pans clear
    // of the corners the controls use, and is sized to the map's box (a phone's map is small:
    // the popup scrolls inside instead of running off the top). On a narrow map an open layer
    // list is collapsed while a popup shows.
    L.Popup.prototype.options.autoPanPaddingTopLeft = L.point(60, 56);
    L.Popup.prototype.options.autoPanPaddingBottomRight = L.point(60, 36);
    L.Map.addInitHook(function () {
      this.on("popupopen", function (event) {
        var popup = event.popup;
        var size = this.getSize();
        var maxWidth = Math.max(160, Math.min(320, size.x - 130));
        var maxHeight = Math.max(120, size.y - 120);
        if (popup.options.maxWidth !== maxWidth || popup.options.maxHeight !== maxHeight) {
          popup.options.maxWidth = maxWidth;
          popup.options.minWidth = Math.min(popup.options.minWidth || 50, maxWidth);
          popup.options.maxHeight = maxHeight;
          popup.update();
        }
        if (size.x < 640 && this.ctrLayerControl) {
          this.ctrLayerControl.collapse();
        }
      });
    });
  }

  /** Runs the generator's steps, each in a task of its own. */
  function runInTasks(steps, done) {
    var next = function () {
      if (steps.next().done) {
        done();
      } else {
        setTimeout(next, 0);
      }
    };
    next();
  }

  function ready(name) {
    var map = window[name];
    built[name] = map;
    var box = document.getElementById(name);
    if (box) {
      box.setAttribute("data-map-ready", "");
    }
    (waiting[name] || []).forEach(function (callback) {
      callback(map);
    });
    delete waiting[name];
    document.dispatchEvent(new CustomEvent("ctr:map-ready", { detail: { name: name, map: map } }));
  }

  function define(name, files, steps) {
    files.forEach(function (file) {
      if (sources.indexOf(file) < 0) {
        sources.push(file);
      }
    });
    var box = document.getElementById(name);
    var build = function () {
      if (box) {
        box.setAttribute("data-map-building", "");
      }
      loadLeaflet(files).then(function () {
        runInTasks(steps(), function () {
          ready(name);
        });
      });
    };
    if (!box || !("IntersectionObserver" in window)) {
      build();
      return;
    }
    var observer = new IntersectionObserver(
      function (entries) {
        if (entries.some(function (entry) { return entry.isIntersecting; })) {
          observer.disconnect();
          build();
        }
      },
      { rootMargin: NEAR }
    );
    observer.observe(box);
  }

  /** callback(map) once the map of `frame` (an element with data-map-var, or its id) is
   * built: at once if it is. */
  function whenMap(frame, callback) {
    if (typeof frame === "string") {
      frame = document.getElementById(frame);
    }
    var name = frame && frame.getAttribute("data-map-var");
    if (!name) {
      return;
    }
    if (built[name]) {
      callback(built[name]);
    } else {
      (waiting[name] = waiting[name] || []).push(callback);
    }
  }

  window.CtrMaps = { define: define, whenMap: whenMap, sources: sources };
})();
