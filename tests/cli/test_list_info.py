"""clprobe list / info, and every form of device selection."""
from clitest import expect, load_json, main, run


def test_list_text_names_selectors():
    r = run("list")
    expect(r.rc == 0, "list failed", r)
    expect("-d 0:0" in r.stdout and "(or -d 0)" in r.stdout, "list shows no selectors", r)
    expect(r.stderr == "", "list wrote to stderr", r)


def test_list_json():
    r = run("list", "--json")
    expect(r.rc == 0, "list --json failed", r)
    doc = load_json(r.stdout, r)
    expect(doc["schema"] == "clprobe.devices", "wrong schema id", r)
    devices = [d for p in doc["platforms"] for d in p["devices"]]
    expect(len(devices) >= 1, "no devices listed", r)
    expect(devices[0]["selector"] == "0:0" and devices[0]["flat_index"] == 0, "first device selector", r)


def info_json(*args, env=None):
    r = run("info", "--json", *args, env=env)
    expect(r.rc == 0, f"info {args} failed", r)
    return load_json(r.stdout, r)


def test_info_reports_what_matters():
    d = info_json()
    for key in ("name", "vendor", "driver_version", "device_version", "type", "pci_address"):
        expect(key in d, f"info lacks {key}")
    expect(d["compute_units"] > 0 and d["global_mem_bytes"] > 0 and d["max_alloc_bytes"] > 0, "sizes missing")
    expect(d["max_work_group_size"] > 0, "max work-group size missing")
    expect(isinstance(d["fp64"], bool) and isinstance(d["fp16"], bool), "fp support flags missing")
    r = run("info")
    expect(r.rc == 0 and "compute units" in r.stdout and "PCI address" in r.stdout, "info text", r)


def test_every_selector_form_selects_the_same_device():
    name = info_json()["name"]
    dtype = info_json()["type"]
    for sel in ("0:0", "0", dtype, name[:6], name[:6].upper()):
        expect(info_json("-d", sel)["name"] == name, f"-d {sel} selected another device")
    expect(info_json(env={"CLPROBE_DEVICE": "0:0"})["name"] == name, "CLPROBE_DEVICE ignored")


def test_no_match_lists_devices_and_exits_2():
    for sel in ("7:7", "99", "no-such-device-name", "accelerator-xyz"):
        r = run("info", "-d", sel)
        expect(r.rc == 2, f"-d {sel}: exit code", r)
        expect("no device matches" in r.stderr and "-d 0:0" in r.stderr, f"-d {sel}: message lacks device list", r)
        expect(r.stdout == "", f"-d {sel}: wrote to stdout", r)
    r = run("info", env={"CLPROBE_DEVICE": "5:5"})
    expect(r.rc == 2 and "CLPROBE_DEVICE" in r.stderr, "a bad CLPROBE_DEVICE is named", r)


def test_malformed_selector_exits_2():
    for sel in ("1:", ":0", "1:x", "0:1:2", "-1"):
        r = run("info", "-d", sel)
        expect(r.rc == 2, f"-d {sel}: exit code", r)
        expect("selector" in r.stderr and "-d 0:0" in r.stderr, f"-d {sel}: message", r)


if __name__ == "__main__":
    main([test_list_text_names_selectors, test_list_json, test_info_reports_what_matters,
          test_every_selector_form_selects_the_same_device, test_no_match_lists_devices_and_exits_2,
          test_malformed_selector_exits_2])
