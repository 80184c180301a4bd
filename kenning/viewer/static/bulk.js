// Bulk decisions on the feed's memories, with undo: "Select…" turns a click (or Enter) on a memory
// into selecting it; pin or unpin the selection at once (POST /api/observations/bulk), and undo it
// from the bar that follows (the answer's "previous" puts each memory back as it was).

import {api, AuthError} from './api.js';
import {h, clear, toast} from './dom.js';

export class Bulk {
  constructor({bar, feed, onChanged}) {
    Object.assign(this, {bar, feed, onChanged});
    this.active = false;
    this.selected = new Map(); // key -> observation id
    this.count = h('span', {id: 'bulk-count', 'aria-live': 'polite'});
    this.toggleBtn = h('button', {type: 'button', id: 'bulk-select', 'aria-pressed': 'false'}, 'Select…');
    this.actions = h('span', {class: 'bulk-actions', hidden: true},
      this.count,
      h('button', {type: 'button', id: 'bulk-all', onclick: () => this.selectAll()}, 'Select all shown'),
      h('button', {type: 'button', id: 'bulk-unpin', onclick: () => this.run('unpin')}, 'Unpin selected'),
      h('button', {type: 'button', id: 'bulk-pin', onclick: () => this.run('pin')}, 'Pin selected'));
    this.undoBar = h('span', {class: 'bulk-undo', id: 'bulk-undo', hidden: true});
    this.toggleBtn.addEventListener('click', () => this.setActive(!this.active));
    bar.append(this.toggleBtn, ' ', this.actions, ' ', this.undoBar);
    this.show();
  }

  setActive(on) {
    this.active = on;
    this.toggleBtn.setAttribute('aria-pressed', on ? 'true' : 'false');
    this.toggleBtn.textContent = on ? 'Done selecting' : 'Select…';
    this.actions.hidden = !on;
    document.body.classList.toggle('selecting', on);
    if (!on) this.clearSelection();
    this.show();
  }

  clearSelection() {
    for (const key of this.selected.keys()) {
      const row = this.feed.rows.get(key);
      if (row && row.el) row.el.removeAttribute('data-selected');
    }
    this.selected.clear();
    this.show();
  }

  /** A feed row was opened: in select mode it is selected (or unselected) instead. */
  take(item, el) {
    if (!this.active) return false;
    if (item.kind !== 'observation') return true;
    if (this.selected.has(item.key)) {
      this.selected.delete(item.key);
      el.removeAttribute('data-selected');
    } else {
      this.selected.set(item.key, item.id);
      el.setAttribute('data-selected', 'true');
    }
    this.show();
    return true;
  }

  selectAll() {
    for (const el of this.feed.list.querySelectorAll("article.item[data-kind='observation']")) {
      const row = this.feed.rows.get(el.dataset.key);
      if (!row) continue;
      this.selected.set(row.item.key, row.item.id);
      el.setAttribute('data-selected', 'true');
    }
    this.show();
  }

  show() {
    const n = this.selected.size;
    this.count.textContent = `${n} selected`;
    for (const id of ['bulk-unpin', 'bulk-pin']) {
      const b = this.actions.querySelector(`#${id}`);
      if (b) b.disabled = n === 0;
    }
  }

  async run(action) {
    const ids = [...this.selected.values()];
    if (!ids.length) return;
    try {
      const res = await api('/api/observations/bulk', {method: 'POST', body: {action, ids}});
      const verb = action === 'pin' ? 'Pinned' : 'Unpinned';
      const failed = res.failed || [];
      toast(`${verb} ${res.done.length} of ${ids.length}` + (failed.length ? `; not done: ${failed.map((f) =>
        `#${f.id} (${f.error})`).join(', ')}` : '.'), failed.length ? 'error' : 'info');
      this.clearSelection();
      this.offerUndo(`${verb} ${res.done.length}.`, res.previous || []);
      this.onChanged();
    } catch (err) {
      if (!(err instanceof AuthError)) toast(`Nothing changed: ${err.message}.`, 'error');
    }
  }

  offerUndo(text, previous) {
    clear(this.undoBar);
    if (!previous.length) {
      this.undoBar.hidden = true;
      return;
    }
    const btn = h('button', {type: 'button', id: 'bulk-undo-btn'}, 'Undo');
    btn.addEventListener('click', async () => {
      btn.disabled = true;
      try {
        const res = await api('/api/observations/bulk', {method: 'POST', body: {action: 'undo', previous}});
        toast(`Undone: ${res.done.length} put back as they were.`);
        this.undoBar.hidden = true;
        this.onChanged();
      } catch (err) {
        btn.disabled = false;
        if (!(err instanceof AuthError)) toast(`Not undone: ${err.message}.`, 'error');
      }
    });
    this.undoBar.append(h('span', null, text), ' ', btn);
    this.undoBar.hidden = false;
  }
}
