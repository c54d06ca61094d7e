// A Wayfinder client in Node.js: loads the .proto at run time (no code
// generation step), puts a small grid map, asks for a path.
//   npm install @grpc/grpc-js @grpc/proto-loader
//   node find_path.js [PROTO_DIR] [HOST:PORT]
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const protoDir = process.argv[2] || '../../../proto';
const target = process.argv[3] || '127.0.0.1:50051';

const definition = protoLoader.loadSync('wayfinder/v1/wayfinder.proto', {
  includeDirs: [protoDir], keepCase: true, enums: String, longs: Number, defaults: true,
});
const { Pathfinder } = grpc.loadPackageDefinition(definition).wayfinder.v1;
// Large answers (whole flow fields, many samples) exceed gRPC's default 4 MiB
// receive limit: accept what the server may send (--max_message_bytes, 64 MiB).
const client = new Pathfinder(target, grpc.credentials.createInsecure(),
  { 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
const deadline = () => new Date(Date.now() + 2000);

// A 4 x 3 grid, row-major, 0 = free, 255 = blocked: a wall with a gap at the bottom.
const cells = Buffer.from([0, 0, 255, 0,
                           0, 0, 255, 0,
                           0, 0, 0,   0]);
const map = { name: 'node-demo', grid: { width: 4, height: 3, cells } };

// Close the gap with a named obstacle: one atomic UpdateMap batch, applied only
// if the map is still at the version we stored (else ABORTED). Then plan with
// min_version, so no path is found on a version before the edit, and watch.
function closeTheDoor(version, request) {
  const door = { id: 'door', rect: { x: 2, y: 2, width: 1, height: 1 } };
  const update = { map: 'node-demo', expected_version: version, edits: [{ add_obstacle: door }] };
  client.UpdateMap(update, { deadline: deadline() }, (err, info) => {
    if (err) throw err;
    client.FindPath({ ...request, min_version: info.version }, { deadline: deadline() },
      (err, path) => {
        if (err) throw err;
        console.log(`door closed: version ${info.version}, ${path.status}`);
        // WatchMaps: the current version of each watched map, then every change.
        const watch = client.WatchMaps({ maps: ['node-demo'] });
        watch.on('data', (event) => {
          console.log(`watch: ${event.kind} ${event.map} version ${event.version}`);
          watch.cancel();
        });
        watch.on('error', () => client.close());  // CANCELLED, after the cancel above
      });
  });
}

client.PutMap({ map }, { deadline: deadline() }, (err, info) => {
  if (err) throw err;
  console.log(`stored ${info.name} version ${info.version}`);
  const request = { map: 'node-demo', start: { x: 0.5, y: 0.5 }, goal: { x: 3.5, y: 0.5 } };
  client.FindPath(request, { deadline: deadline() }, (err, path) => {
    if (err) {  // err.code is a grpc.status, err.details the server's message
      console.error(`error: ${grpc.status[err.code]}: ${err.details}`);
      process.exit(1);
    }
    const points = path.waypoints.map((p) => `(${p.x}, ${p.y})`).join(' ');
    console.log(`${path.status} length ${path.length.toFixed(4)}: ${points}`);
    client.FindPath({ ...request, goal: { x: 9, y: 9 } }, { deadline: deadline() }, (err) => {
      console.log(`error: ${grpc.status[err.code]}: ${err.details}`);
      closeTheDoor(info.version, request);
    });
  });
});
