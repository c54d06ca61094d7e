"""A Wayfinder client in Python with stubs generated from the .proto.

    apt-get install python3-grpcio python3-protobuf protobuf-compiler-grpc
    cd docs/clients/python
    protoc -I ../../../proto --python_out=. --grpc_python_out=. \
        --plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin \
        wayfinder/v1/wayfinder.proto
    python3 find_path.py  # Debian's python3 (/usr/bin/python3)
"""
import grpc

from wayfinder.v1 import wayfinder_pb2 as wf
from wayfinder.v1 import wayfinder_pb2_grpc as wf_grpc

# Large answers (whole flow fields, many samples) exceed gRPC's default 4 MiB
# receive limit: accept what the server may send (--max_message_bytes, 64 MiB).
OPTIONS = [("grpc.max_receive_message_length", 64 << 20)]

with grpc.insecure_channel("127.0.0.1:50051", options=OPTIONS) as channel:
    stub = wf_grpc.PathfinderStub(channel)
    # A 4 x 3 grid, row-major, 0 = free, 255 = blocked: a wall with a gap at the bottom.
    grid = wf.GridSource(width=4, height=3, cells=bytes([0, 0, 255, 0,
                                                         0, 0, 255, 0,
                                                         0, 0, 0, 0]))
    info = stub.PutMap(wf.PutMapRequest(map=wf.Map(name="py-demo", grid=grid)), timeout=2)
    print(f"stored {info.name} version {info.version}")

    request = wf.FindPathRequest(map="py-demo", start=wf.Point(x=0.5, y=0.5),
                                 goal=wf.Point(x=3.5, y=0.5))
    path = stub.FindPath(request, timeout=2)
    points = " ".join(f"({p.x:g}, {p.y:g})" for p in path.waypoints)
    print(f"{wf.PathStatus.Name(path.status)} length {path.length:.4f}: {points}")

    request.goal.x = 9
    try:
        stub.FindPath(request, timeout=2)
    except grpc.RpcError as e:  # e.code() is a grpc.StatusCode, e.details() the message
        print(f"error: {e.code().name}: {e.details()}")

    # Close the gap with a named obstacle: one atomic UpdateMap batch, applied
    # only if the map is still at the version we stored (else ABORTED).
    door = wf.Obstacle(id="door", rect=wf.Rect(x=2, y=2, width=1, height=1))
    info = stub.UpdateMap(wf.UpdateMapRequest(map="py-demo", expected_version=info.version,
                                              edits=[wf.MapEdit(add_obstacle=door)]), timeout=2)
    request.goal.x = 3.5
    request.min_version = info.version  # never plan on a version before the edit
    path = stub.FindPath(request, timeout=2)
    print(f"door closed: version {info.version}, {wf.PathStatus.Name(path.status)}")

    # WatchMaps: the current version of each watched map, then every change.
    events = stub.WatchMaps(wf.WatchMapsRequest(maps=["py-demo"]))
    for event in events:
        print(f"watch: {wf.MapEvent.Kind.Name(event.kind)} {event.map} version {event.version}")
        events.cancel()
        break
