// A memory or standing rule written by hand (POST /api/observations/new): the project, the text, an
// optional title and type, and whether it is a rule given to every session of the project.

import {api, AuthError} from './api.js';
import {h, toast} from './dom.js';

export class Write {
  constructor({slot, projects, types, current, onSaved}) {
    Object.assign(this, {projects, types, current, onSaved});
    this.button = h('button', {type: 'button', id: 'write-open', 'aria-expanded': 'false'}, 'New memory…');
    this.project = h('select', {id: 'write-project', name: 'project', required: true});
    this.type = h('select', {id: 'write-type', name: 'type'});
    this.title = h('input', {id: 'write-title', name: 'title', maxlength: 300, placeholder: 'optional'});
    this.text = h('textarea', {id: 'write-text', name: 'text', required: true, rows: 3,
      placeholder: 'e.g. We deploy on Tuesdays only, never on Fridays.'});
    this.rule = h('input', {type: 'checkbox', id: 'write-rule', name: 'rule'});
    this.error = h('p', {class: 'error', id: 'write-error', role: 'alert'});
    this.form = h('form', {class: 'write-form', id: 'write-form', hidden: true, 'aria-label': 'New memory'},
      h('label', null, 'Project ', this.project), ' ', h('label', null, 'Type ', this.type),
      h('label', {class: 'write-wide'}, 'Title ', this.title),
      h('label', {class: 'write-wide'}, 'What to remember ', this.text),
      h('label', null, this.rule, ' A standing rule: given first to every session of the project'),
      h('div', null, h('button', {type: 'submit', id: 'write-save'}, 'Save'), ' ',
        h('button', {type: 'button', id: 'write-cancel', onclick: () => this.toggle(false)}, 'Cancel')),
      this.error);
    this.button.addEventListener('click', () => this.toggle(this.form.hidden));
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.save();
    });
    slot.append(this.button, this.form);
  }

  toggle(open) {
    this.form.hidden = !open;
    this.button.setAttribute('aria-expanded', open ? 'true' : 'false');
    if (!open) return;
    const keep = this.project.value || this.current();
    this.project.replaceChildren(...this.projects().map((p) => h('option', {value: p.project}, p.name || p.project)));
    if (keep) this.project.value = keep;
    this.type.replaceChildren(h('option', {value: ''}, 'discovery (default)'),
      ...this.types().map((t) => h('option', {value: t.id}, t.label || t.id)));
    this.text.focus();
  }

  async save() {
    this.error.textContent = '';
    const body = {project: this.project.value, text: this.text.value, title: this.title.value || null,
      type: this.type.value || null, rule: this.rule.checked};
    try {
      const res = await api('/api/observations/new', {method: 'POST', body});
      toast(res.created ? `Saved as #${res.id}${res.layer === 'rule' ? ', a standing rule' : ''}.`
        : `Already in memory as #${res.id}.`);
      this.text.value = '';
      this.title.value = '';
      this.rule.checked = false;
      this.toggle(false);
      this.onSaved(res.id);
    } catch (err) {
      if (!(err instanceof AuthError)) this.error.textContent = `Not saved: ${err.message}.`;
    }
  }
}
