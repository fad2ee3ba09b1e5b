print("testfleet")
