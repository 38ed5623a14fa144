/* The device's own position (the browser's geolocation), as every page that asks for it
 * words it: the map pages' "Usar minha localização" (maps/point-input.js) and the
 * operator's reception (ctr/reception-location.js). The position comes from the device
 * (GPS, or the phone's own network fix), so it works offline too. Loaded before those
 * scripts; without it they behave as a browser without geolocation. */
(function () {
  "use strict";

  // High accuracy: a worksite or a gate is a point, not a neighbourhood. 15 s lets a cold
  // GPS get its first fix outdoors; a fix up to a minute old is still where the device is.
  var OPTIONS = { enableHighAccuracy: true, timeout: 15000, maximumAge: 60000 };

  // GeolocationPositionError codes; anything else (an insecure page) reads as unavailable.
  var REASONS = {
    1: "Localização não permitida neste navegador",
    2: "Localização indisponível agora (GPS desligado ou sem sinal)",
    3: "A localização demorou demais para chegar",
  };

  /** Whether asking makes sense: the API exists and the page is https (or localhost), which
   * the browsers require before they ask the user. */
  function available() {
    return "geolocation" in navigator && window.isSecureContext !== false;
  }

  /** One fix: found({lat, lon, accuracy}) with the accuracy in whole metres (0 when the
   * device does not say), or failed(reason, code) with the reason in plain Portuguese. */
  function locate(found, failed) {
    navigator.geolocation.getCurrentPosition(
      function (position) {
        var c = position.coords;
        found({ lat: c.latitude, lon: c.longitude, accuracy: Math.round(c.accuracy || 0) });
      },
      function (error) {
        var code = error && error.code;
        failed(REASONS[code] || REASONS[2], code);
      },
      OPTIONS
    );
  }

  /** "precisão de ± 12 m" (no line break inside "± 12 m"), or "" when the device gave no
   * accuracy. */
  function precision(fix) {
    return fix.accuracy ? "precisão de ±\u00a0" + fix.accuracy + "\u00a0m" : "";
  }

  window.CtrDeviceLocation = { available: available, locate: locate, precision: precision };
})();
