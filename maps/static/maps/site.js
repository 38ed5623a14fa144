/* What every page shares on a phone: the header's "Menu" button opens and closes the nav
 * (aria-expanded; on a wide screen the nav is always shown and the button stays hidden by
 * CSS); data tables become one card per row (each cell gets its column's header as
 * data-label, which the CSS shows before the value). Without JavaScript the nav is simply open
 * and tables scroll inside their frame. What every map shares (popups clear of the controls,
 * the layer list collapsed on a phone) is in maps/map-loader.js, on the pages with a map. */
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

  // A long sub-menu (the transporter's eight entries took four rows of a
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
      // The box is a flex container, whose items drop the spaces between
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
      // A sortable header's label without its sort mark and state (on a
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
})();
