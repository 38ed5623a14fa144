/* What every page shares on a phone: the header's "Menu" button opens and closes the nav
 * (aria-expanded; on a wide screen the nav is always shown and the button stays hidden by
 * CSS); data tables become one card per row (each cell gets its column's header as
 * data-label, which the CSS shows before the value); and map popups stay clear of the map's
 * controls. Without JavaScript the nav is simply open and tables scroll inside their frame.
 * Deferred, before the pages' map scripts (inline modules, which run after the deferred scripts
 * before them), so the map hook below sees every map created. */
(function () {
  "use strict";

  var button = document.getElementById("menu-botao");
  var nav = document.getElementById("menu");
  if (button && nav) {
    // The CSS shows the button on a phone (html.js), so the page does not move when this runs.
    var header = button.closest(".site-header");
    var setOpen = function (open) {
      button.setAttribute("aria-expanded", open ? "true" : "false");
      header.classList.toggle("menu-open", open);
    };
    button.addEventListener("click", function () {
      setOpen(button.getAttribute("aria-expanded") !== "true");
    });
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && button.getAttribute("aria-expanded") === "true") {
        setOpen(false);
        button.focus();
      }
    });
  }

  // Issue 16 point 8: a long sub-menu (the transporter's eight entries took four rows of a
  // phone) keeps its first entries in one row and opens the others from its "Mais" button;
  // the CSS hides them below 960 px when JavaScript runs (html.js, from the first paint).
  Array.prototype.forEach.call(document.querySelectorAll(".subnav-toggle"), function (item) {
    var subnav = item.closest(".subnav");
    var more = item.querySelector("button");
    more.addEventListener("click", function () {
      var open = more.getAttribute("aria-expanded") !== "true";
      more.setAttribute("aria-expanded", open ? "true" : "false");
      subnav.classList.toggle("subnav-open", open);
    });
  });

  // A link alone in its block (a paragraph or list item with no other text) is a tap
  // target, not a link in running text: it gets the 44 px box (class lone-link).
  var main = document.getElementById("conteudo");
  Array.prototype.forEach.call(main ? main.querySelectorAll("a[href]") : [], function (link) {
    if (getComputedStyle(link).display !== "inline" || link.closest(".leaflet-container")) {
      return;
    }
    var block = link.parentElement;
    while (block && getComputedStyle(block).display.indexOf("inline") === 0) {
      block = block.parentElement;
    }
    var text = function (el) {
      return (el.textContent || "").replace(/\s+/g, "");
    };
    if (block && text(block) === text(link)) {
      link.classList.add("lone-link");
      // Issue 25 point 19: the box is a flex container, whose items drop the spaces between
      // them ("<strong>0</strong> grande(s)" read "0grande(s)"); words and elements mixed go
      // into one span, an inline line of their own.
      if (link.children.length && link.childNodes.length > 1) {
        var line = document.createElement("span");
        while (link.firstChild) {
          line.appendChild(link.firstChild);
        }
        link.appendChild(line);
      }
    }
  });

  Array.prototype.forEach.call(document.querySelectorAll("table.data-table"), function (table) {
    var headRow = table.tHead && table.tHead.rows[table.tHead.rows.length - 1];
    if (!headRow) {
      return;
    }
    var labels = [];
    Array.prototype.forEach.call(headRow.cells, function (cell) {
      // A sortable header's label without its sort mark and state (issue 16 point 8: on a
      // phone every card repeated "Transporte▼ (em ordem decrescente)").
      var copy = cell.cloneNode(true);
      Array.prototype.forEach.call(copy.querySelectorAll(".sort-link > *"), function (part) {
        part.remove();
      });
      for (var i = 0; i < (cell.colSpan || 1); i++) {
        labels.push(copy.textContent.trim());
      }
    });
    // The footer's totals are cards like the rows above them; a footer row's own heading
    // ("Total", "Volume total declarado") is the card's title, not a value of the first column.
    var groups = Array.prototype.slice.call(table.tBodies);
    if (table.tFoot) {
      groups.push(table.tFoot);
    }
    groups.forEach(function (body) {
      var footer = body === table.tFoot;
      Array.prototype.forEach.call(body.rows, function (row) {
        var column = 0;
        Array.prototype.forEach.call(row.cells, function (cell) {
          var title = footer && cell.tagName === "TH";
          if (labels[column] && !title && !cell.hasAttribute("data-label")) {
            cell.setAttribute("data-label", labels[column]);
          }
          column += cell.colSpan || 1;
        });
      });
    });
    table.classList.add("stackable");
  });

  // Map popups: Leaflet draws its controls (zoom, layer list) above every popup (they sit in
  // separate stacking contexts), so a popup must not open under them. Each popup pans clear
  // of the corners the controls use, and is sized to the map's box (a phone's map is small:
  // the popup scrolls inside instead of running off the top). On a narrow map an open layer
  // list is collapsed while a popup shows.
  if (window.L && L.Control && L.Control.Layers) {
    // On a phone every map's layer list starts collapsed (its button opens it): expanded, it
    // would cover most of a small map. Wider screens keep it open, as a legend.
    L.Control.Layers.addInitHook(function () {
      if (window.matchMedia("(max-width: 640px)").matches) {
        this.options.collapsed = true;
      }
    });
  }

  if (window.L && L.Map && L.Popup) {
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
})();
