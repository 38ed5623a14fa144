/* The transporter's pages without a connection: registers the service
   worker, keeps the offline bundle, lets the issue form be filled from the recent worksites,
   keeps a CTR submitted offline on the phone with a provisional number ("PROV-AB12-0007",
   queue.js) and its departure time, and sends the kept CTRs to POST /api/v1/ctrs/ (with the
   provisional number as Idempotency-Key) when the connection returns: on the `online`
   event, on a Background Sync message from the worker, and on every page load.

   Loaded by maps/base.html on the transporter's pages only, after queue.js; its URLs come
   from its <script> tag's data- attributes. Everything it shows is pt-BR, written with
   textContent (the records come from the network). */
(function () {
  "use strict";

  var script = document.currentScript;
  var CFG = {
    sw: script.getAttribute("data-sw"),
    scope: script.getAttribute("data-scope"),
    bundle: script.getAttribute("data-bundle"),
    api: script.getAttribute("data-api"),
    detail: script.getAttribute("data-detail"),
    form: script.getAttribute("data-form"),
    tz: script.getAttribute("data-tz") || "America/Sao_Paulo",
  };
  var queue = window.CTROfflineQueue;
  var DEFAULT_MAX_HOURS = 24;
  var bundle = null;

  if (!queue || !("indexedDB" in window)) return;

  // --- small helpers ------------------------------------------------------------------------

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  // The parts of a moment in the municipality's time zone (the server's, settings.TIME_ZONE).
  function partsOf(iso) {
    var parts = new Intl.DateTimeFormat("en-GB", {
      timeZone: CFG.tz, year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", hourCycle: "h23",
    }).formatToParts(new Date(iso));
    var out = {};
    parts.forEach(function (p) { out[p.type] = p.value; });
    return out;
  }

  // "dd/mm/aaaa hh:mm", as the site prints a moment (config.br.br_datetime).
  function when(iso) {
    var p = partsOf(iso);
    return p.day + "/" + p.month + "/" + p.year + " " + p.hour + ":" + p.minute;
  }

  // The departure's day in the municipality's time zone: the CTR's transport date.
  function dayOf(iso) {
    var p = partsOf(iso);
    return p.year + "-" + p.month + "-" + p.day;
  }

  // "-22,81" or "1.234,5" (the form's decimal comma) or "-22.81" to a number.
  function number(text) {
    var value = String(text || "").trim().replace(/\s/g, "");
    if (value.indexOf(",") >= 0) value = value.replace(/\./g, "").replace(",", ".");
    return value === "" ? NaN : Number(value);
  }

  function comma(value) {
    return value.toFixed(6).replace(".", ",");
  }

  function cookie(name) {
    var match = document.cookie.match(new RegExp("(?:^|; )" + name + "=([^;]*)"));
    return match ? decodeURIComponent(match[1]) : "";
  }

  function csrfToken() {
    var field = document.querySelector("input[name=csrfmiddlewaretoken]");
    return cookie("csrftoken") || (field ? field.value : "");
  }

  function maxHours() {
    return (bundle && bundle.provisional_sync_max_hours) || DEFAULT_MAX_HOURS;
  }

  function late(record) {
    return Date.now() - new Date(record.departure).getTime() > maxHours() * 3600 * 1000;
  }

  // --- the service worker and the bundle -------------------------------------------------------

  function markReady(state) {
    document.documentElement.setAttribute("data-offline", state);
  }

  function keepThisPage(worker) {
    // The first visit loads before the worker controls the page: tell it what this page
    // used, and the issue form itself, so that both open offline.
    var urls = [CFG.form, CFG.bundle, location.pathname];
    // The page's own files (the DOM) and what they loaded in turn (resource timing, which
    // not every browser fills).
    var found = Array.prototype.map.call(
      document.querySelectorAll("link[rel~=stylesheet][href], link[rel~=icon][href], script[src], img[src]"),
      function (node) { return node.href || node.src; }
    ).concat(performance.getEntriesByType("resource").map(function (entry) { return entry.name; }))
      // Leaflet, which maps/map-loader.js loads only when the map comes near the viewport: a
      // phone that never scrolled to the map online still has it offline.
      .concat(window.CtrMaps ? window.CtrMaps.sources : []);
    found.forEach(function (name) {
      var url = new URL(name, location.href);
      if (url.origin === location.origin && url.pathname.indexOf("/api/") !== 0) {
        urls.push(url.pathname + url.search);
      }
    });
    urls = urls.filter(function (url, i) { return urls.indexOf(url) === i; });
    return new Promise(function (resolve) {
      var channel = new MessageChannel();
      channel.port1.onmessage = function (event) { resolve(event.data); };
      worker.postMessage({ type: "cache", urls: urls }, [channel.port2]);
    });
  }

  function register() {
    if (!("serviceWorker" in navigator) || !CFG.sw) return Promise.resolve();
    navigator.serviceWorker.addEventListener("message", function (event) {
      if (event.data && event.data.type === "sync") sync();
    });
    return navigator.serviceWorker.register(CFG.sw, { scope: CFG.scope })
      .then(function () { return navigator.serviceWorker.ready; })
      .then(function (registration) {
        if (!navigator.onLine) return markReady("pronto");
        return keepThisPage(registration.active).then(function () { markReady("pronto"); });
      })
      .catch(function () { markReady("indisponivel"); });
  }

  function loadBundle() {
    var fromStore = queue.bundle().then(function (kept) { if (kept && !bundle) bundle = kept; });
    if (!navigator.onLine) return fromStore;
    return fetch(CFG.bundle, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (fresh) {
        if (fresh) {
          bundle = fresh;
          return queue.saveBundle(fresh);
        }
        return fromStore;
      })
      .catch(function () { return fromStore; });
  }

  // --- the issue form offline ----------------------------------------------------------------

  var form = document.getElementById("form-ctr");

  function field(name) { return form.elements.namedItem(name); }

  function setValue(name, value) {
    var input = field(name);
    if (!input) return;
    input.value = value;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  // A choice of the recent worksites (the bundle's): fills generator, address and origin.
  function worksitePicker() {
    if (!form || !bundle || !bundle.worksites || !bundle.worksites.length) return;
    if (document.getElementById("obra-recente")) return;
    var anchor = field("generator_name");
    var fieldset = anchor && anchor.closest("fieldset");
    if (!fieldset) return;
    var wrap = el("div", { class: "field offline-worksite" });
    wrap.appendChild(el("label", { for: "obra-recente" }, "Obra recente (preenche gerador, endereço e origem)"));
    var select = el("select", { id: "obra-recente" });
    select.appendChild(el("option", { value: "" }, "— escolher uma obra recente —"));
    bundle.worksites.forEach(function (site, i) {
      var label = site.address + (site.neighbourhood ? " — " + site.neighbourhood : "") +
        " (" + site.generator.name + ")";
      select.appendChild(el("option", { value: String(i) }, label));
    });
    select.addEventListener("change", function () {
      var site = bundle.worksites[Number(select.value)];
      // ctr-form.js holds the origin to a registered worksite: it hears
      // of the choice before the origin fills.
      form.dispatchEvent(new CustomEvent("ctr:obra", { detail: site || null }));
      if (!site) return;
      setValue("generator_name", site.generator.name);
      setValue("generator_document", site.generator.document);
      setValue("worksite_address", site.address);
      setValue("worksite_neighbourhood", site.neighbourhood || "");
      setValue("origin_lat", comma(site.point[1]));
      setValue("origin_lon", comma(site.point[0]));
    });
    wrap.appendChild(select);
    fieldset.insertBefore(wrap, fieldset.querySelector(".field-row"));
  }

  function plateOf(select) {
    var id = Number(select.value);
    var known = bundle && bundle.vehicles.filter(function (v) { return v.id === id; })[0];
    if (known) return known.plate;
    var option = select.options[select.selectedIndex];
    return option ? option.textContent.trim().split(/\s/)[0] : "";
  }

  function equipmentOf(select) {
    if (!select || !select.value) return "";
    var id = Number(select.value);
    var known = bundle && bundle.equipment.filter(function (e) { return e.id === id; })[0];
    if (known) return known.code;
    return select.options[select.selectedIndex].textContent.split(" (")[0].trim();
  }

  // The form as the API's CTRInput; `missing` lists what the driver still has to fill.
  function readForm(departure) {
    var missing = [];
    var need = function (name, label) {
      var input = field(name);
      var value = input ? String(input.value || "").trim() : "";
      if (!value) missing.push(label);
      return value;
    };
    var vehicle = field("vehicle");
    if (!vehicle || !vehicle.value) missing.push("Veículo");
    var name = need("generator_name", "Nome do gerador");
    var document_ = need("generator_document", "CPF/CNPJ do gerador");
    var address = need("worksite_address", "Endereço da obra");
    var point = function (lonName, latName, label) {
      var lon = number(field(lonName) && field(lonName).value);
      var lat = number(field(latName) && field(latName).value);
      if (isNaN(lon) || isNaN(lat)) {
        missing.push(label);
        return null;
      }
      return { type: "Point", coordinates: [lon, lat] };
    };
    var origin = point("origin_lon", "origin_lat", "Origem (latitude e longitude)");
    var destination = point("destination_lon", "destination_lat", "Destino (latitude e longitude)");
    var waste = [];
    var total = Number((field("waste-TOTAL_FORMS") || {}).value || 0);
    for (var i = 0; i < total; i++) {
      var kind = field("waste-" + i + "-waste_class");
      var volume = field("waste-" + i + "-volume_m3");
      var description = field("waste-" + i + "-description");
      if (kind && kind.value && volume && volume.value) {
        waste.push({
          "class": kind.value,
          volume_m3: String(number(volume.value)),
          description: description ? description.value.trim() : "",
        });
      }
    }
    if (!waste.length) missing.push("Resíduos (classe e volume)");
    var payload = {
      transport_date: dayOf(departure),
      vehicle_plate: vehicle ? plateOf(vehicle) : "",
      equipment_code: equipmentOf(field("equipment")),
      generator: { name: name, document: document_ },
      worksite: {
        address: address,
        neighbourhood: (field("worksite_neighbourhood") || {}).value || "",
        location: origin,
      },
      origin: origin,
      destination: destination,
      waste: waste,
      provisional_departure_at: departure,
    };
    var facility = field("destination_facility");
    if (facility && facility.value) payload.destination_facility = Number(facility.value);
    return { payload: payload, missing: missing };
  }

  function notice(kind, title, lines) {
    var box = document.getElementById("ctr-offline-aviso");
    if (!box) {
      box = el("div", { id: "ctr-offline-aviso", tabindex: "-1" });
      form.parentNode.insertBefore(box, form);
    }
    box.className = "alert " + (kind === "error" ? "alert-error" : "offline-kept");
    box.setAttribute("role", kind === "error" ? "alert" : "status");
    box.textContent = "";
    box.appendChild(el("p", { class: "offline-kept-title" }, title));
    if (lines.length) {
      var list = el("ul");
      lines.forEach(function (line) { list.appendChild(el("li", {}, line)); });
      box.appendChild(list);
    }
    box.focus();
    box.scrollIntoView({ block: "start" });
  }

  function keepOffline(event) {
    if (!form || event.target !== form || navigator.onLine) return;
    // No network: the post would fail. Keep the CTR on the phone instead (forms.js sees the
    // event prevented and leaves the button alone).
    event.preventDefault();
    event.stopImmediatePropagation();
    var departure = new Date().toISOString();
    var read = readForm(departure);
    if (read.missing.length) {
      notice("error", "Sem conexão: preencha antes de guardar o CTR provisório:", read.missing);
      return;
    }
    var summary = read.payload.vehicle_plate + " · " + read.payload.worksite.address;
    var owner = bundle && bundle.transporter ? bundle.transporter.id : null;
    queue.add({ state: "pending", departure: departure, summary: summary, payload: read.payload, transporter: owner })
      .then(function (record) {
        notice("ok", "CTR provisório " + record.number + " guardado no aparelho.", [
          "Saída: " + when(record.departure) + ".",
          "CTR provisório, será enviado quando houver conexão.",
        ]);
        form.reset();
        if ("serviceWorker" in navigator && navigator.serviceWorker.controller) {
          navigator.serviceWorker.ready.then(function (registration) {
            if (registration.sync) return registration.sync.register("ctr-offline-sync");
          }).catch(function () {});
        }
        return render();
      });
  }

  // --- the list of kept CTRs -------------------------------------------------------------------

  var SEVERITY = { error: "erro", warning: "aviso", alert: "alerta" };

  function panel() {
    var box = document.getElementById("ctr-offline");
    if (!box) {
      var main = document.getElementById("conteudo");
      if (!main) return null;
      box = el("section", { id: "ctr-offline", class: "panel offline-panel", "aria-labelledby": "ctr-offline-titulo" });
      // Under the page's heading, after the block of <main> that holds it (the list's h1
      // sits in .page-head, not in <main> itself).
      var heading = main.querySelector("h1");
      var block = heading;
      while (block && block.parentNode !== main) block = block.parentNode;
      main.insertBefore(box, block ? block.nextSibling : main.firstChild);
    }
    return box;
  }

  function item(record) {
    var li = el("li", { class: "offline-item offline-" + record.state, "data-numero": record.number });
    li.appendChild(el("p", { class: "offline-number" }, record.number));
    li.appendChild(el("p", {}, "Saída: " + when(record.departure) + " · " + record.summary));
    if (record.state === "pending") {
      if (late(record)) {
        li.classList.add("offline-late");
        li.appendChild(el("p", { class: "offline-state" },
          "Alerta: não enviado há mais de " + maxHours() + " h. Procure uma conexão para enviar."));
      } else {
        li.appendChild(el("p", { class: "offline-state" },
          "CTR provisório, será enviado quando houver conexão."));
      }
      if (record.problem) li.appendChild(el("p", { class: "offline-note" }, record.problem));
    } else if (record.state === "synced") {
      var line = el("p", { class: "offline-state" }, "Enviado: ");
      var link = el("a", { href: CFG.detail + record.official + "/", class: "offline-official" }, record.official);
      line.appendChild(link);
      li.appendChild(line);
    } else {
      li.appendChild(el("p", { class: "offline-state" },
        "Recusado ao enviar: " + (record.problem || "o CTR não foi emitido.")));
    }
    var findings = record.findings || [];
    if (findings.length) {
      var list = el("ul", { class: "offline-findings" });
      findings.forEach(function (f) {
        var text = f.message || f.mensagem || "";
        var tag = f.code ? " (" + (SEVERITY[f.severity] || f.severity) + " · " + f.code + ")" : "";
        list.appendChild(el("li", {}, text + tag));
      });
      li.appendChild(list);
    } else if (record.state === "synced") {
      li.appendChild(el("p", { class: "offline-note" }, "Nenhuma constatação das regras."));
    }
    if (record.state !== "pending") {
      var drop = el("button", { type: "button", class: "button button-secondary" }, "Tirar da lista");
      drop.addEventListener("click", function () { queue.remove(record.number).then(render); });
      li.appendChild(drop);
    }
    return li;
  }

  // A phone shared by two transporters' drivers: each sees and sends only its own company's
  // kept CTRs (the session's, as the bundle names it).
  function mine(records) {
    var current = bundle && bundle.transporter ? bundle.transporter.id : null;
    return records.filter(function (r) { return r.transporter == null || current == null || r.transporter === current; });
  }

  function render() {
    return queue.list().then(mine).then(function (records) {
      var box = document.getElementById("ctr-offline");
      if (!records.length && !form) {
        if (box) box.remove();
        return;
      }
      box = panel();
      if (!box) return;
      box.hidden = false;
      // The issue form's empty state is in the page already (data-empty): left as it is.
      if (!records.length && box.hasAttribute("data-empty")) return;
      box.removeAttribute("data-empty");
      box.textContent = "";
      box.appendChild(el("h2", { id: "ctr-offline-titulo" }, "CTRs guardados no aparelho"));
      if (!records.length) {
        box.appendChild(el("p", { class: "muted" },
          "Sem conexão, o CTR emitido aqui fica guardado no aparelho com um número provisório " +
          "e é enviado sozinho quando a conexão voltar."));
        return;
      }
      var list = el("ul", { class: "offline-list" });
      records.forEach(function (record) { list.appendChild(item(record)); });
      box.appendChild(list);
    });
  }

  // --- sending the kept CTRs ----------------------------------------------------------------

  function problemText(problem) {
    var errors = (problem && problem.errors) || [];
    var parts = errors.map(function (e) {
      var text = e.message || e.mensagem || "";
      return e.code ? text + " (" + e.code + ")" : text;
    });
    return [problem && problem.detail].concat(parts).filter(Boolean).join(" ");
  }

  function send(record) {
    return fetch(CFG.api, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json",
        "X-CSRFToken": csrfToken(),
        // The provisional number: a retry after a lost answer gets the same CTR back.
        "Idempotency-Key": record.number,
      },
      body: JSON.stringify(record.payload),
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (response.status === 201 || response.status === 200) {
          record.state = "synced";
          record.official = body.number;
          record.findings = body.findings || [];
          record.problem = "";
        } else if (response.status === 409 && /CTR-\d{7}-\d{4}-\d{6}/.test(body.detail || "")) {
          // Sent before, its answer lost (ctr.field.offline.refuse_synced_twice): the CTR it became.
          var match = /CTR-\d{7}-\d{4}-\d{6}/.exec(body.detail);
          return fetch(CFG.api + match[0] + "/", { credentials: "same-origin", headers: { Accept: "application/json" } })
            .then(function (r) { return r.ok ? r.json() : { findings: [] }; })
            .then(function (ctr) {
              record.state = "synced";
              record.official = match[0];
              record.findings = ctr.findings || [];
              return queue.put(record);
            });
        } else if (response.status === 400 || response.status === 422) {
          record.state = "refused";
          record.problem = problemText(body);
          record.findings = (body.errors || []).filter(function (e) { return e.code; });
        } else if (response.status === 401 || response.status === 403) {
          record.problem = "Entre de novo no sistema para enviar este CTR.";
          return queue.put(record).then(function () { return false; });
        } else {
          record.problem = "O servidor não respondeu (" + response.status + "); nova tentativa depois.";
        }
        return queue.put(record).then(function () { return true; });
      });
    });
  }

  function withLock(work) {
    if (navigator.locks && navigator.locks.request) {
      return navigator.locks.request("ctr-offline-sync", work);
    }
    return work();
  }

  var syncing = null;
  function sync() {
    if (!navigator.onLine) return Promise.resolve();
    if (syncing) return syncing;
    syncing = withLock(function () {
      return queue.list().then(mine).then(function (records) {
        var pending = records.filter(function (r) { return r.state === "pending"; }).reverse();
        return pending.reduce(function (chain, record) {
          return chain.then(function (goOn) { return goOn === false ? false : send(record); });
        }, Promise.resolve(true));
      });
    }).catch(function () {}).then(function () {
      syncing = null;
      return render();
    });
    return syncing;
  }

  // --- start ----------------------------------------------------------------------------------

  function forgetOnSignOut(event) {
    var target = event.target;
    if (!(target instanceof HTMLFormElement) || !target.classList.contains("nav-form")) return;
    queue.saveBundle(null);
    if (window.caches) caches.delete("ctr-offline-v1");
  }

  document.addEventListener("submit", keepOffline, true);
  document.addEventListener("submit", forgetOnSignOut, true);
  window.addEventListener("online", function () { sync(); });
  window.addEventListener("offline", render);
  Promise.all([register(), loadBundle()]).then(function () {
    worksitePicker();
    return render();
  }).then(sync);
})();
