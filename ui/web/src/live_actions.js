// The Nodes tab's live-mode actions beyond drain and resume (gputwin run SCENARIO --serve): inject a fault (an XID)
// on a node, and scale the cloud pool (power nodes up, or idle ones down). They go through the token-protected
// controls POST /api/control/node/inject and /api/control/scale (ui/dashboard_api.hpp); main.js hands in its
// element builder and its control() call, and shows the toolbar only while the run takes controls.
//
//   const tools = nodeTools({ el, control, done });
//   row.append(...tools.rowButtons('gpu005'));   // an "Inject XID" button per node
//   tools.toolbar(table, liveControls());        // XID, GPU and the pool's scale buttons above the node table

export function nodeTools({ el, control, done }) {
  let bar = null;
  const value = (id, fallback) => {
    const v = Number(bar?.querySelector(`#${id}`)?.value);
    return Number.isInteger(v) && v >= 0 ? v : fallback;
  };
  const say = (text, error = false) => {
    const message = document.getElementById('live-message');
    message.classList.toggle('error', error);
    message.textContent = text;
  };

  async function inject(node) {
    const xid = value('live-xid', 79);
    const gpu = value('live-xid-gpu', 0);
    const r = await control('node/inject', { node, xid, gpu });
    if (!r) return;
    say(r.struck ? `node/inject: XID ${xid} on ${node} GPU ${gpu} (${r.effect}, ${r.symptom})`
      : `node/inject: ${node} is out of service; XID ${xid} had no effect`);
    done(r);
  }

  async function scale(action) {
    const count = value('live-scale-count', 1);
    const r = await control('scale', { action, count });
    if (!r) return;
    say(`scale ${action}: ${r.nodes.length ? r.nodes.join(', ') : 'no node could be'} powered ${action}`);
    done(r);
  }

  return {
    rowButtons: (node) => [
      el('button', { 'data-testid': `inject-${node}`, title: 'Inject the XID chosen above on this node',
        onclick: (e) => { e.stopPropagation(); inject(node); } }, 'Inject XID'),
    ],
    toolbar(table, visible) {
      if (!bar) {
        bar = el('div', { class: 'node-tools', 'data-testid': 'node-tools' },
          el('label', {}, 'XID ', el('input', { id: 'live-xid', 'data-testid': 'live-xid', type: 'number', min: '1', value: '79', size: '5' })),
          el('label', {}, ' GPU ', el('input', { id: 'live-xid-gpu', 'data-testid': 'live-xid-gpu', type: 'number', min: '0', value: '0', size: '3' })),
          el('span', {}, '  Cloud pool: '),
          el('input', { id: 'live-scale-count', 'data-testid': 'live-scale-count', type: 'number', min: '1', value: '1', size: '3' }),
          el('button', { 'data-testid': 'scale-up', onclick: () => scale('up') }, 'Power up'),
          el('button', { 'data-testid': 'scale-down', onclick: () => scale('down') }, 'Power down'));
        table.before(bar);
      }
      bar.hidden = !visible;
    },
  };
}
