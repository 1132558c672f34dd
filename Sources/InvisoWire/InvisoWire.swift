// Wire types: see the files under REST/ and Signaling/.
