// The one live-update connection of a browser to this cellscope server, shared by every tab (a SharedWorker).
// Browsers allow about six HTTP/1.1 connections per host; an EventSource per tab would use one each for as long
// as the tab is open, so a few tabs could starve the rest. This worker holds the only `/api/events` stream and
// relays each `snapshot` event to the tabs connected to it; a tab says `close` when it goes away, and the
// stream closes with the last tab.
const tabs = new Set();
let source = null;
let latest = null;

function open() {
  source = new EventSource('/api/events');
  source.addEventListener('snapshot', (event) => {
    latest = event.data;
    for (const tab of tabs) tab.postMessage(latest);
  });
}

self.onconnect = (event) => {
  const tab = event.ports[0];
  tabs.add(tab);
  tab.onmessage = (message) => {
    if (message.data === 'close') {
      tabs.delete(tab);
      if (tabs.size === 0 && source) {
        source.close();
        source = null;
        latest = null;
      }
    }
  };
  tab.start();
  if (!source) open();
  else if (latest !== null) tab.postMessage(latest);
};
