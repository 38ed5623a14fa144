/* The admin map's drawing tools (Leaflet.draw, through django-leaflet's geometry widgets) in
 * Brazilian Portuguese. django-leaflet loads leaflet.draw.js in the
 * widget's Media and translates L.drawLocal only on pages with its `leaflet_js` tag, which the
 * admin does not use (and it ships no pt-BR catalogue): this file comes right after it, through
 * LEAFLET_CONFIG["PLUGINS"]["forms"], before any map is made, so the toolbars start from these
 * strings. */
(function () {
  "use strict";
  if (!window.L || !L.drawLocal) {
    return;
  }
  // Each leaf of L.drawLocal by its dotted path; the keys not listed keep Leaflet.draw's.
  var strings = {
    "draw.toolbar.actions.title": "Cancelar o desenho",
    "draw.toolbar.actions.text": "Cancelar",
    "draw.toolbar.finish.title": "Concluir o desenho",
    "draw.toolbar.finish.text": "Concluir",
    "draw.toolbar.undo.title": "Apagar o último ponto desenhado",
    "draw.toolbar.undo.text": "Apagar o último ponto",
    "draw.toolbar.buttons.polyline": "Desenhar uma linha",
    "draw.toolbar.buttons.polygon": "Desenhar um polígono",
    "draw.toolbar.buttons.rectangle": "Desenhar um retângulo",
    "draw.toolbar.buttons.circle": "Desenhar um círculo",
    "draw.toolbar.buttons.marker": "Marcar um ponto",
    "draw.toolbar.buttons.circlemarker": "Marcar um ponto circular",
    "draw.handlers.circle.tooltip.start": "Clique e arraste para desenhar o círculo.",
    "draw.handlers.circle.radius": "Raio",
    "draw.handlers.circlemarker.tooltip.start": "Clique no mapa para marcar o ponto circular.",
    "draw.handlers.marker.tooltip.start": "Clique no mapa para marcar o ponto.",
    "draw.handlers.polygon.tooltip.start": "Clique para começar a desenhar a forma.",
    "draw.handlers.polygon.tooltip.cont": "Clique para continuar a desenhar a forma.",
    "draw.handlers.polygon.tooltip.end": "Clique no primeiro ponto para fechar a forma.",
    "draw.handlers.polyline.error": "<strong>Erro:</strong> as bordas da forma não podem se cruzar!",
    "draw.handlers.polyline.tooltip.start": "Clique para começar a desenhar a linha.",
    "draw.handlers.polyline.tooltip.cont": "Clique para continuar a desenhar a linha.",
    "draw.handlers.polyline.tooltip.end": "Clique no último ponto para terminar a linha.",
    "draw.handlers.rectangle.tooltip.start": "Clique e arraste para desenhar o retângulo.",
    "draw.handlers.simpleshape.tooltip.end": "Solte o botão do mouse para terminar o desenho.",
    "edit.toolbar.actions.save.title": "Salvar as alterações",
    "edit.toolbar.actions.save.text": "Salvar",
    "edit.toolbar.actions.cancel.title": "Cancelar a edição, descartando as alterações",
    "edit.toolbar.actions.cancel.text": "Cancelar",
    "edit.toolbar.actions.clearAll.title": "Apagar todas as camadas",
    "edit.toolbar.actions.clearAll.text": "Apagar tudo",
    "edit.toolbar.buttons.edit": "Editar as camadas",
    "edit.toolbar.buttons.editDisabled": "Nenhuma camada para editar",
    "edit.toolbar.buttons.remove": "Apagar camadas",
    "edit.toolbar.buttons.removeDisabled": "Nenhuma camada para apagar",
    "edit.handlers.edit.tooltip.text": "Arraste as alças ou os marcadores para editar.",
    "edit.handlers.edit.tooltip.subtext": "Clique em Cancelar para desfazer as alterações.",
    "edit.handlers.remove.tooltip.text": "Clique numa forma para apagá-la.",
  };
  Object.keys(strings).forEach(function (path) {
    var keys = path.split(".");
    var leaf = keys.pop();
    var node = keys.reduce(function (parent, key) {
      parent[key] = parent[key] || {};
      return parent[key];
    }, L.drawLocal);
    node[leaf] = strings[path];
  });
})();
