/* Leaflet's own controls in Brazilian Portuguese on every map of the site:
 * loaded by maps.base.LocalAssetsMap right after leaflet.js, before any map is made, so
 * the defaults below are the options every L.map's controls start from. */
(function () {
  "use strict";
  if (!window.L) {
    return;
  }
  L.Control.Zoom.prototype.options.zoomInTitle = "Aproximar";
  L.Control.Zoom.prototype.options.zoomOutTitle = "Afastar";
  L.Control.Attribution.prototype.options.prefix =
    '<a href="https://leafletjs.com" title="Biblioteca JavaScript de mapas interativos">Leaflet</a>';
  // Metres and kilometres only: the scale's feet and miles mean nothing here.
  L.Control.Scale.prototype.options.imperial = false;
})();
