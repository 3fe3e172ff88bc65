import CognitoClient
print("bench")
