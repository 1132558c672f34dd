print("inviso")
