/* "Onde descartar": a click on the map (or the device's location) fills the search form.
 * The helpers are maps/point-input.js (CtrPointInput), loaded before this script. */
window.CtrPointInput.whenPageMap(function (map) {
  "use strict";

  var points = window.CtrPointInput;
  var lonInput = document.getElementById("id_longitude");
  var latInput = document.getElementById("id_latitude");
  if (!map || !lonInput || !latInput) {
    return;
  }
  var say = points.statusLine(document.getElementById("geo-status"));
  var mark = points.movingMarker(map, {
    radius: 8,
    color: "#ffffff",
    weight: 3,
    fillColor: "#111827",
    fillOpacity: 1,
  });

  points.collapseLayersOnPhone(map, true);

  function choose(latlng) {
    mark(points.fill(lonInput, latInput, latlng));
    say("Local escolhido: latitude " + latInput.value + ", longitude " + lonInput.value + ".");
  }

  map.on("click", function (event) {
    choose(event.latlng);
  });

  points.showTyped(map, lonInput, latInput, mark);
  points.offerLocation(map, document.getElementById("usar-localizacao"), say, choose, 16);
});
